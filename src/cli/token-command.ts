import type { Command } from 'commander';
import { LIFETIME_RULE } from '../domain/lifetime.js';
import { parseScopes, SCOPE_LIST } from '../domain/scopes.js';
import { issueToken, parseDuration, TokenError } from '../tokens/token-service.js';
import { tokenStatus } from '../tokens/token-status.js';
import { EXISTING_STORE_HELP, withDatabaseOption, withStore, type Options } from './options.js';
import { printTable } from './table.js';

const iso = (date: Date | null) => date?.toISOString() ?? '-';

export function registerTokenCommands(program: Command): void {
  const token = program
    .command('token')
    .description('Create, list and revoke API tokens (in the store DATABASE_URL names).')
    .addHelpText('after', EXISTING_STORE_HELP);

  withDatabaseOption(
    token
      .command('create')
      .description(
        'Create a token and print its secret, once, alone on the last line. It has no creator: only revoking it ' +
          'revokes it, and it may create tokens (POST /tokens) within its own scopes and lifetime.',
      )
      .requiredOption('--name <name>', 'a unique name, e.g. the client it is for')
      .option('--scopes <scopes>', `comma-separated, from: ${SCOPE_LIST}`, 'plants:read,plants:write')
      .option('--expires-in <duration>', `lifetime: ${LIFETIME_RULE} (default: never expires)`),
  ).action(async (options: Options) =>
    withStore(options, async (store) => {
      let scopes;
      try {
        scopes = parseScopes(String(options.scopes));
      } catch (error) {
        throw new TokenError((error as Error).message);
      }
      const expiresInMs =
        typeof options.expiresIn === 'string' ? parseDuration(options.expiresIn, '--expires-in') : undefined;
      const { record, secret } = await issueToken(store.tokens, { name: String(options.name), scopes, expiresInMs });
      process.stderr.write(
        `created token ${record.id} '${record.name}' with scopes ${record.scopes.join(',')}` +
          `${record.expiresAt === null ? '' : `, expiring ${record.expiresAt.toISOString()}`}.\n` +
          'The secret below is shown only now; store it safely.\n',
      );
      process.stdout.write(`${secret}\n`);
    }),
  );

  withDatabaseOption(
    token
      .command('list')
      .description('List tokens (never their secrets).')
      .option('--json', 'print JSON instead of a table'),
  ).action(async (options: Options) =>
    withStore(options, async (store) => {
      const tokens = await store.tokens.listTokens();
      if (options.json === true) {
        process.stdout.write(
          `${JSON.stringify(
            tokens.map((t) => ({ ...t, status: tokenStatus(t) })),
            null,
            2,
          )}\n`,
        );
        return;
      }
      printTable(
        ['ID', 'NAME', 'SCOPES', 'STATUS', 'CREATED', 'EXPIRES', 'LAST USED', 'CREATED BY'],
        tokens.map((t) => [
          t.id,
          t.name,
          t.scopes.join(','),
          tokenStatus(t),
          iso(t.createdAt),
          iso(t.expiresAt),
          iso(t.lastUsedAt),
          t.createdBy ?? '-',
        ]),
      );
    }),
  );

  withDatabaseOption(
    token
      .command('revoke')
      .description(
        'Revoke a token by id or name, with every token it created, directly or not (takes effect within ' +
          'TOKEN_CACHE_TTL_MS, 2 s by default).',
      )
      .argument('<id-or-name>'),
  ).action(async (idOrName: string, options: Options) =>
    withStore(options, async (store) => {
      const revoked = await store.tokens.revokeToken(idOrName, new Date());
      if (revoked === undefined) throw new TokenError(`no token has id or name '${idOrName}'`);
      const { token, descendantIds } = revoked;
      const count = descendantIds.length;
      const also =
        count === 0
          ? ''
          : ` and ${count} token${count === 1 ? '' : 's'} it created, directly or not: ${descendantIds.join(', ')}`;
      process.stdout.write(`revoked token ${token.id} '${token.name}'${also}\n`);
    }),
  );
}
