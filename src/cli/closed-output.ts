/**
 * A reader that stops early (`plantstore plants list | head -3`) closes the pipe, and the next write to it fails
 * with EPIPE: Node ignores SIGPIPE, so that arrives as an 'error' event on process.stdout, which with no listener
 * crashed the command with a stack trace. The reader wanted no more, so the command ends there, quietly and with
 * exit code 0, whatever it was doing: what a shell pipeline means, and what `set -o pipefail` scripts need. (A
 * tool killed by SIGPIPE reports 141 instead; nothing is lost by 0, since the pipeline's reader had all it read.)
 * Any other output error still fails the command.
 *
 * A service is the exception: its output is a log, and a log reader that went away (a closed pipe, a collector
 * restarted) is no reason to stop serving. `serve` keeps running and its lines go nowhere until it is restarted.
 */
const CLOSED_READER = 'EPIPE';

function whenReaderCloses(stream: NodeJS.WriteStream, then: () => void): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== CLOSED_READER) throw error;
    then();
  });
}

/** For a command: ends it once stdout or stderr is closed (`2>&1 | head` closes both). */
export function endQuietlyWhenOutputCloses(): void {
  for (const stream of [process.stdout, process.stderr]) whenReaderCloses(stream, () => process.exit(0));
}

/** For the service: carries on serving once stdout or stderr is closed. */
export function keepServingWhenOutputCloses(): void {
  for (const stream of [process.stdout, process.stderr]) whenReaderCloses(stream, () => {});
}
