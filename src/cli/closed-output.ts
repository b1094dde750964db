/**
 * A reader that stops early (`plantstore plants list | head -3`) closes the pipe, and the next write to it fails
 * with EPIPE: Node ignores SIGPIPE, so that arrives as an 'error' event on process.stdout, which with no listener
 * crashed the command with a stack trace. The reader wanted no more, so the command ends there, quietly and with
 * exit code 0, whatever it was doing: what a shell pipeline means, and what `set -o pipefail` scripts need. (A
 * tool killed by SIGPIPE reports 141 instead; nothing is lost by 0, since the pipeline's reader had all it read.)
 * Any other output error still fails the command.
 */
const CLOSED_READER = 'EPIPE';

function endWhenReaderCloses(stream: NodeJS.WriteStream): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== CLOSED_READER) throw error;
    process.exit(0);
  });
}

/** Installs the handler on stdout and stderr (`2>&1 | head` closes both). */
export function endQuietlyWhenOutputCloses(): void {
  endWhenReaderCloses(process.stdout);
  endWhenReaderCloses(process.stderr);
}
