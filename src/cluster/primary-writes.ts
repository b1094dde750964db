/**
 * The primary's side of a worker's SQLite writes: each joins the primary's group commit (group-commit.ts) in the
 * order the worker sent it, so the instance keeps one writer, one fsync per batch and today's durability. Every
 * worker is told once writes committed, so its change stream reads the log (one tell per turn, however many).
 */
import { StoreUnavailableError } from '../store/errors.js';
import type { GroupCommitWriter } from '../store/sqlite/group-commit.js';
import type { RemoteWrite } from '../store/sqlite/store-writer.js';
import type { SettledCall } from '../store/sqlite/writer-protocol.js';

export function sharedWrites(
  writer: GroupCommitWriter,
  committed: () => void,
): (writes: readonly RemoteWrite[]) => Promise<SettledCall[]> {
  let told = false;
  const tell = () => {
    if (told) return;
    told = true;
    setImmediate(() => {
      told = false;
      committed();
    });
  };
  return async (writes) => {
    const outcomes = await Promise.allSettled(
      writes.map((item) =>
        item.kind === 'plant'
          ? writer.write(item.write)
          : writer.callUntyped({ store: item.store, method: item.method, args: item.args }),
      ),
    );
    if (outcomes.some((outcome) => outcome.status === 'fulfilled')) tell();
    return outcomes.map((outcome): SettledCall =>
      outcome.status === 'fulfilled'
        ? { ok: true, value: outcome.value }
        : {
            ok: false,
            failure: {
              message: outcome.reason instanceof Error ? outcome.reason.message : String(outcome.reason),
              unavailable: outcome.reason instanceof StoreUnavailableError,
            },
          },
    );
  };
}
