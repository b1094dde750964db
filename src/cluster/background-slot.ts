/** The worker that runs the instance's background jobs (webhook delivery, retention): slot 1, whoever fills it. */
export const BACKGROUND_SLOT = 1;
