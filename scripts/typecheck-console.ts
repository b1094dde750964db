/**
 * Type-checks the console (src/console/app) as browser code: its own tsconfig, with the DOM library. Run by
 * `npm run typecheck` after the main check, which leaves the console out (Preact's types bring in the DOM library,
 * which would retype the service's Node streams).
 *
 * One finding is expected and set aside: the shared client (packages/client/src/bulk.ts) calls
 * ReadableStream.from, which Node and browsers have but TypeScript's DOM library does not yet declare. Any other
 * finding fails.
 */
import ts from 'typescript';
import { fileURLToPath } from 'node:url';

const CONFIG = fileURLToPath(new URL('../src/console/app/tsconfig.json', import.meta.url));

const knownGap = (d: ts.Diagnostic) =>
  d.file?.fileName.endsWith('/packages/client/src/bulk.ts') === true &&
  d.code === 2339 &&
  ts.flattenDiagnosticMessageText(d.messageText, '\n').startsWith("Property 'from' does not exist");

const host: ts.FormatDiagnosticsHost = {
  getCanonicalFileName: (name) => name,
  getCurrentDirectory: ts.sys.getCurrentDirectory,
  getNewLine: () => '\n',
};

const parsed = ts.getParsedCommandLineOfConfigFile(
  CONFIG,
  {},
  { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
);
if (parsed === undefined) throw new Error(`cannot read ${CONFIG}`);
const program = ts.createProgram(parsed.fileNames, parsed.options);
const findings = ts.getPreEmitDiagnostics(program).filter((d) => !knownGap(d));
if (findings.length > 0) {
  process.stderr.write(ts.formatDiagnosticsWithColorAndContext(findings, host));
  process.exit(1);
}
