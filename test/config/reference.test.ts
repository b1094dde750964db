/**
 * docs/configuration.md is what `npm run config:reference` writes from src/config: a variable added,
 * a default or a range changed, or a guide that starts or stops naming a variable makes it stale.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  configurationVariables,
  REFERENCE_PATH,
  renderConfigurationReference,
} from '../../scripts/config-reference.js';
import { ConfigError, loadConfig } from '../../src/config/index.js';

describe('docs/configuration.md', () => {
  it('is what the configuration code generates', () => {
    assert.ok(
      readFileSync(REFERENCE_PATH, 'utf8') === renderConfigurationReference(),
      'docs/configuration.md is stale: run `npm run config:reference` and commit the result',
    );
  });

  it('lists every variable the loader checks, each refused with the rule the reference quotes', () => {
    const variables = configurationVariables();
    assert.ok(variables.length >= 40, `only ${variables.length} variables found`);
    for (const { name, accepts } of variables) {
      if (accepts === 'any text') continue;
      assert.throws(
        () => loadConfig({ [name]: '\u0001' }),
        (error: unknown) => error instanceof ConfigError && error.message.includes(accepts),
        name,
      );
    }
  });

  it('states the defaults the loader uses when nothing is set', () => {
    const byName = new Map(configurationVariables().map((v) => [v.name, v.defaultValue]));
    const config = loadConfig({});
    assert.equal(byName.get('PORT'), `\`${config.port}\``);
    assert.equal(byName.get('BODY_LIMIT'), `\`${config.bodyLimitBytes}\``);
    assert.equal(byName.get('EVENTS_MAX_BACKLOG_BYTES'), `\`${config.events.maxBacklogBytes}\``);
    assert.equal(byName.get('MAX_HEADER_SIZE'), `\`${config.limits.maxHeaderSizeBytes}\``);
    assert.equal(byName.get('DATABASE_URL'), `\`${config.databaseUrl}\``);
  });
});
