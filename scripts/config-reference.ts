/**
 * Writes docs/configuration.md, the one complete list of the service's environment variables, from the
 * configuration code itself (`npm run config:reference`): every variable src/config reads, its flag,
 * its default (from the code), its accepted values (the very message a bad value gets at start-up),
 * what it does (the setting's doc comment) and which documents explain it. test/config/reference.test.ts
 * fails when the checked-in file no longer matches, as the schema files do.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig } from '../src/config/index.js';

const ROOT = new URL('..', import.meta.url);
export const REFERENCE_PATH = fileURLToPath(new URL('docs/configuration.md', ROOT));
const CONFIG_FILES = ['src/config/index.ts', 'src/config/service-limits.ts', 'src/config/database-url.ts'];
const CONFIG_DIR = 'src/config';

/** Defaults that are not a literal in the code, in words. */
const DEFAULT_IN_WORDS: Readonly<Record<string, string>> = {
  DATABASE_URL: '`sqlite:./data/plantstore.db`',
  LOG_LEVEL: '`info`',
  SQLITE_READERS: 'the cores Node.js may use, at most 8',
  RATE_LIMIT_ANONYMOUS: 'the value of `RATE_LIMIT`',
  WEBHOOK_RETRY_SCHEDULE: '`5s,5m,30m,2h,5h,10h,10h`',
  METRICS_PORT: 'unset: /metrics beside the API',
  CORS_ORIGINS: 'empty: CORS off',
  REDIS_URL: 'unset: limits counted per instance',
  TRUST_PROXY: '`false`',
  RATE_LIMIT_NAMESPACE: '`plantstore:ratelimit:`',
  PUBLIC_URL: "unset: each request's own origin",
  WEBHOOK_DISABLE_AFTER: '`5d`',
  DATABASE_LISTEN_URL: "unset: DATABASE_URL's",
};

/** What a variable does, where no doc comment of a setting says it (a variable read outside a setting's line). */
const MEANING_IN_WORDS: Readonly<Record<string, string>> = {
  HOST: 'The address the API listens on (`0.0.0.0` or `::` for every interface).',
  PORT: 'The port the API listens on (0: any free port, logged at start).',
  LOG_LEVEL: 'The least severe log level written.',
  RATE_LIMIT: 'Requests per minute per token (0: no limit).',
  RATE_LIMIT_ANONYMOUS: 'Requests per minute per client address, for requests without a token.',
  REQUEST_TIMEOUT_MS: 'Longest a whole request may take to arrive.',
  HEADERS_TIMEOUT_MS: 'Longest the request head may take to arrive.',
  LINGER_TIMEOUT_MS: 'Longest the rest of a refused body is read and dropped.',
  REDIS_URL: 'A Redis server that instances share the rate limits through.',
  RATE_LIMIT_NAMESPACE: 'Prefix of the rate-limit keys in Redis (several services on one Redis).',
  METRICS_HOST: 'The address the separate /metrics listener binds (with `METRICS_PORT`).',
  PUBLIC_URL:
    "The URL clients reach the service at behind a proxy: the base of /openapi.json's `servers` and of the links of `GET /`.",
};

interface Variable {
  readonly name: string;
  readonly flag: string;
  readonly defaultValue: string;
  readonly accepts: string;
  readonly meaning: string;
  readonly documents: readonly string[];
}

const read = (path: string) => readFileSync(new URL(path, ROOT), 'utf8');

/** Every variable the code reads, `parser(source, 'NAME', default, ...)` or `source.NAME`, by name. */
function variableNames(): string[] {
  const names: string[] = [];
  for (const file of readdirSync(new URL(`${CONFIG_DIR}/`, ROOT))
    .filter((f) => f.endsWith('.ts'))
    .sort()) {
    const code = read(`${CONFIG_DIR}/${file}`);
    for (const match of code.matchAll(/\(source, '([A-Z][A-Z0-9_]*)'|source\.([A-Z][A-Z0-9_]*)/g)) {
      const name = (match[1] ?? match[2]) as string;
      if (!names.includes(name)) names.push(name);
    }
  }
  return names.sort();
}

/** The default argument of `parser(source, 'NAME', <default>, ...)`, as the code writes it, read as a value. */
function literalDefault(name: string): string | undefined {
  for (const file of CONFIG_FILES) {
    const call = new RegExp(`\\w+\\(source, '${name}', (?:\\[[^\\]]*\\], )?([^,)]+)`).exec(read(file));
    if (!call) continue;
    const expression = (call[1] as string).trim();
    if (/^'[^']*'$/.test(expression)) return `\`${expression.slice(1, -1)}\``;
    if (/^(true|false)$/.test(expression)) return `\`${expression}\``;
    if (/^[\d_ *]+$/.test(expression)) {
      const value = expression
        .replaceAll('_', '')
        .split('*')
        .reduce((product, factor) => product * Number(factor.trim()), 1);
      return `\`${value}\``;
    }
    if (/^2 \*\* \d+$/.test(expression)) return `\`${2 ** Number(expression.split('**')[1])}\``;
  }
  return undefined;
}

/** The function of src/config that reads `source.NAME` itself (databaseUrl, corsOrigins, ...). */
function readerOf(name: string): string | undefined {
  for (const file of CONFIG_FILES) {
    const code = read(file);
    for (const [, reader, body] of code.matchAll(/function (\w+)\(source[^{]*\{([\s\S]*?)\n\}/g))
      if (new RegExp(`source\\.${name}\\b`).test(body as string)) return reader;
  }
  return undefined;
}

/** The doc comment of the setting a variable fills: `field: parser(source, 'NAME'` and `/** ... *\/ readonly field`. */
function docComment(name: string): string | undefined {
  const reader = readerOf(name);
  for (const file of CONFIG_FILES) {
    const code = read(file);
    const field =
      new RegExp(`(\\w+): \\w+\\(source, '${name}'`).exec(code)?.[1] ??
      (reader === undefined ? undefined : new RegExp(`(\\w+): ${reader}\\(source`).exec(code)?.[1]);
    if (field === undefined) continue;
    const comment = new RegExp(`/\\*\\*((?:(?!\\*/)[\\s\\S])*)\\*/\\s*readonly ${field}\\b`).exec(code)?.[1];
    if (comment === undefined) continue;
    return comment
      .split('\n')
      .map((line) => line.replace(/^\s*\*?\s?/, '').trim())
      .filter((line) => line !== '')
      .join(' ');
  }
  return undefined;
}

/** What start-up says to a value no setting accepts: the rule, in the loader's own words. */
function accepted(name: string): string {
  const bad = '\u0001';
  try {
    loadConfig({ [name]: bad });
    return 'any text';
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.message
      .replace(` (got '${bad}')`, '')
      .replace(/^[A-Z_]+:? (must be )?/, '')
      .replace(/^'[^']*' is not [^:]*: (use )?/, '');
  }
}

/** The `plantstore serve` flag that overrides the variable (src/cli/options.ts). */
function flagOf(name: string): string {
  const option = new RegExp(`${name}: text\\(options\\.(\\w+)\\)`).exec(read('src/cli/options.ts'))?.[1];
  return option === undefined ? '' : `\`--${option.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}\``;
}

/** The README and the guides in docs/ that name the variable, as links from docs/. */
function documentsMentioning(name: string): string[] {
  const mention = new RegExp(`\\b${name}\\b`);
  const guides = readdirSync(new URL('docs/', ROOT))
    .filter((file) => file.endsWith('.md') && file !== 'configuration.md')
    .sort()
    .map((file) => `docs/${file}`);
  return ['README.md', ...guides]
    .filter((path) => mention.test(read(path)))
    .map((path) => (path.startsWith('docs/') ? path.slice('docs/'.length) : `../${path}`));
}

export function configurationVariables(): Variable[] {
  const missing: string[] = [];
  const variables = variableNames().map((name) => {
    const defaultValue = DEFAULT_IN_WORDS[name] ?? literalDefault(name) ?? '';
    const meaning = MEANING_IN_WORDS[name] ?? docComment(name) ?? '';
    if (defaultValue === '') missing.push(`${name}: no default found (add it to DEFAULT_IN_WORDS)`);
    if (meaning === '') missing.push(`${name}: no doc comment on its setting (add one, or to MEANING_IN_WORDS)`);
    const documents = documentsMentioning(name);
    return { name, flag: flagOf(name), defaultValue, accepts: accepted(name), meaning, documents };
  });
  if (missing.length > 0) throw new Error(`cannot describe every variable:\n${missing.join('\n')}`);
  return variables;
}

const cell = (text: string) => text.replaceAll('|', '\\|');

export function renderConfigurationReference(): string {
  const rows = configurationVariables().map((v) =>
    [
      `\`${v.name}\``,
      v.flag,
      v.defaultValue,
      cell(v.accepts),
      cell(v.meaning),
      v.documents.map((d) => `[${d.replace('../', '')}](${d})`).join(', '),
    ].join(' | '),
  );
  return `# Configuration reference

<!-- Generated by \`npm run config:reference\` from src/config; edit the code, not this file. -->

Plant Store is configured by environment variables; the four with a flag can also be given to
\`plantstore serve\` (the flag wins). Every value is checked once at start-up: a bad one stops the
service with a message naming the variable and what it accepts, the text of the "accepts" column.
An empty variable counts as unset. (The \`plantstore plants\` commands, a client of the service, read
\`PLANTSTORE_URL\` and \`PLANTSTORE_TOKEN\` instead: [client.md](client.md).)

| variable | flag | default | accepts | what it does | explained in |
|---|---|---|---|---|---|
${rows.map((row) => `| ${row} |`).join('\n')}
`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(REFERENCE_PATH, renderConfigurationReference());
  console.log(`wrote ${REFERENCE_PATH}`);
}
