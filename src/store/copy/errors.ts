/** A copy refused or stopped for a reason the user can act on; nothing has been written to the target. */
export class CopyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CopyError';
  }
}
