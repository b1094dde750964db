/**
 * Builds the operator console (src/console/app) into dist/console/: one minified script and one stylesheet,
 * named by content hash (served immutable), an index.html naming them, each precompressed (.br, .gz), and a
 * manifest the service reads. Run by `npm run build`; the service serves whatever build is there.
 *
 * Written to a fresh directory, then swapped in, so a service or test reading the previous build never sees
 * half of the next.
 */
import { build } from 'esbuild';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const CONSOLE_DIST = join(ROOT, 'dist/console');
const APP = 'src/console/app';

export interface ConsoleManifest {
  /** Served file name -> content type. index.html is the page; every other file is hashed. */
  readonly files: Record<string, string>;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
};

function page(script: string, stylesheet: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Plant Store console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/console/assets/${stylesheet}">
<script type="module" src="/console/assets/${script}"></script>
</head>
<body>
<div id="console"><p class="loading">Loading the console…</p></div>
<noscript>The console needs JavaScript; the API itself is described at /docs.</noscript>
</body>
</html>
`;
}

export async function buildConsole(outdir: string = CONSOLE_DIST): Promise<ConsoleManifest> {
  const staging = `${outdir}.building-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { app: `${APP}/main.ts`, style: `${APP}/style.css` },
    outdir: join(staging, 'assets'),
    entryNames: '[name]-[hash]',
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome120', 'firefox120', 'safari17'],
    metafile: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  const outputs = Object.keys(result.metafile.outputs).map((path) => basename(path));
  const script = outputs.find((name) => name.startsWith('app-') && name.endsWith('.js'));
  const stylesheet = outputs.find((name) => name.startsWith('style-') && name.endsWith('.css'));
  if (script === undefined || stylesheet === undefined)
    throw new Error('the console build wrote no script or stylesheet');
  // esbuild writes a style-*.js stub for the CSS entry: the page needs only the stylesheet.
  for (const name of outputs)
    if (name.startsWith('style-') && name.endsWith('.js')) rmSync(join(staging, 'assets', name));
  writeFileSync(join(staging, 'index.html'), page(script, stylesheet));

  const files: Record<string, string> = { 'index.html': TYPES['.html'] as string };
  for (const name of [script, stylesheet]) files[`assets/${name}`] = TYPES[name.slice(name.lastIndexOf('.'))] as string;
  for (const name of Object.keys(files)) {
    const body = readFileSync(join(staging, name));
    writeFileSync(join(staging, `${name}.gz`), gzipSync(body, { level: 9 }));
    writeFileSync(
      join(staging, `${name}.br`),
      brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
    );
  }
  const manifest: ConsoleManifest = { files };
  writeFileSync(join(staging, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);

  mkdirSync(join(outdir, '..'), { recursive: true });
  const old = `${outdir}.old-${process.pid}`;
  try {
    renameSync(outdir, old);
  } catch {
    // No previous build.
  }
  renameSync(staging, outdir);
  rmSync(old, { recursive: true, force: true });
  return manifest;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildConsole();
}
