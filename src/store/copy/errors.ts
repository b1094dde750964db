/**
 * A copy refused or stopped for a reason the user can act on (a missing source, a
 * target that holds data, stores at different schema versions): one line says
 * what and what to do. Nothing has been written to the target when it is thrown.
 */
export class CopyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CopyError';
  }
}
