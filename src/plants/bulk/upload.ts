/**
 * An import's body, telling the client's cut from the service's own stop: leaving the read
 * loop early also ends the request stream, so only an error the stream raises means the
 * connection was lost.
 */

/** The upload ended before its end on the client's side: the connection was lost. */
export class UploadCutOff extends Error {
  constructor(cause: unknown) {
    super('the upload was cut off', { cause });
    this.name = 'UploadCutOff';
  }
}

/** The chunks of `body`; a failure to read them is thrown as UploadCutOff. */
export async function* uploadedBytes(body: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of body) yield chunk;
  } catch (error) {
    // Only the stream's own failures reach here: a consumer that stops early returns from the yield, never throws
    // into it.
    throw new UploadCutOff(error);
  }
}
