/**
 * An import's body as the client sends it, telling the client's cut from the
 * service's own stop. When the import stops reading early (a CSV header it cannot
 * read, a body over IMPORT_LIMIT, the store failing), leaving the loop ends the
 * request stream, so a stream ended before its end is no sign that the client
 * went away. Only an error the stream itself raises is: that is what it does when
 * the connection is lost mid-upload.
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
