/**
 * Whether the SQLite store can serve (/readyz). SELECT 1 answers on a full, read-only or corrupt file alike,
 * so readiness also follows the open's integrity check (not ready until done, never if corrupt), the writes
 * (after one fails for lack of disk or I/O, not ready until one succeeds; a probe write retries while clients
 * send none), and any corrupt page met later (never ready again: a file does not heal itself).
 */
import { isCorruption, sqliteCode } from './errors.js';
import type { WriteFailure } from './writer-protocol.js';

const PROBE_INTERVAL_MS = 5000;

export class SqliteHealth {
  private integrity: string | undefined;
  private corruption: string | undefined;
  private failingWrites: string | undefined;
  private lastProbeAt = 0;

  constructor(private readonly path: string) {
    this.integrity = `the SQLite store at ${path} is still being checked (PRAGMA quick_check)`;
  }

  /** The integrity check's findings: ['ok'] for a sound file. */
  checked(findings: readonly string[]): void {
    this.integrity =
      findings.length === 1 && findings[0] === 'ok'
        ? undefined
        : this.corrupt(`PRAGMA quick_check: ${findings.join('; ')}`);
  }

  checkFailed(error: unknown): void {
    const code = (error as { code?: unknown } | null)?.code;
    const reason = String((error as Error | null)?.message ?? error);
    this.integrity =
      typeof code === 'string' && isCorruption(code)
        ? this.corrupt(reason)
        : `the SQLite store at ${this.path} could not be checked: ${reason}`;
  }

  /** The outcome of each write unit the writer thread ran. */
  noteWrite(failure: WriteFailure | undefined, now = Date.now()): void {
    if (failure === undefined) {
      this.failingWrites = undefined;
      return;
    }
    if (isCorruption(failure.code)) this.corruption ??= this.corrupt(failure.message);
    if (!failure.unavailable) return;
    if (this.failingWrites === undefined) this.lastProbeAt = now;
    this.failingWrites = `writes to the SQLite store at ${this.path} fail: ${failure.message}`;
  }

  /** A read that failed: only a corrupt page tells about the store (a read never fails for a full disk). */
  noteRead(failure: { readonly message: string; readonly code?: string }): void {
    if (isCorruption(failure.code)) this.corruption ??= this.corrupt(failure.message);
  }

  /** Runs a read on the main thread's connection, noting a corrupt page it meets. */
  reading<T>(read: () => T): T {
    try {
      return read();
    } catch (error) {
      this.noteReadError(error);
      throw error;
    }
  }

  /** The same, for the token and webhook stores' reads, which answer with promises. */
  async readingLater<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (error) {
      this.noteReadError(error);
      throw error;
    }
  }

  private noteReadError(error: unknown): void {
    const code = sqliteCode(error);
    if (code !== undefined && error instanceof Error) this.noteRead({ message: error.message, code });
  }

  /** Whether to try a probe write now: writes are failing, and none was tried lately. */
  shouldProbe(now = Date.now()): boolean {
    if (this.failingWrites === undefined || now - this.lastProbeAt < PROBE_INTERVAL_MS) return false;
    this.lastProbeAt = now;
    return true;
  }

  /** Why the store cannot serve, or undefined when it can. */
  problem(): string | undefined {
    return this.corruption ?? this.integrity ?? this.failingWrites;
  }

  private corrupt(finding: string): string {
    return `the SQLite store at ${this.path} is corrupt (${finding}): stop the service and restore the file from a backup`;
  }
}
