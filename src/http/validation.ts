/**
 * Request validation, compiled from the schemas the OpenAPI document shows. Two Ajv instances: a JSON body is
 * typed and validated strictly, path and query values arrive as text and are coerced. Ajv's `integer` only
 * knows doubles, so int64 becomes our `int64` keyword, which hands every valid value on as a `bigint`.
 */
import { Ajv, type ErrorObject } from 'ajv';
import type { DataValidationCxt } from 'ajv/dist/types/index.js';
import type { FastifyServerOptions } from 'fastify';
import type { FastifySchemaCompiler, FastifySchemaValidationError } from 'fastify/types/schema.js';
import { ApiError, failure } from './errors.js';
import { describePattern, UNPAIRED_SURROGATE, WELL_FORMED, WELL_FORMED_PROBLEM } from '../domain/text-rules.js';
import { isInt64Value, isIntegerValue, parseInt64Text, INT64_MAX, INT64_MIN } from './int64.js';

const INT64_RANGE = `between ${INT64_MIN} and ${INT64_MAX}`;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * The `int64` keyword. In a body only the parser's integer values pass (the string
 * "1" is not an id); in a path or query string, where everything is text, a plain
 * decimal integer passes.
 */
function int64Keyword(acceptsText: boolean) {
  const validate = (_enabled: boolean, data: unknown, _schema?: unknown, where?: DataValidationCxt): boolean => {
    const value =
      typeof data === 'string'
        ? acceptsText
          ? parseInt64Text(data)
          : undefined
        : isInt64Value(data)
          ? BigInt(data)
          : undefined;
    if (value !== undefined) {
      if (where?.parentData !== undefined) Reflect.set(where.parentData, where.parentDataProperty, value);
      return true;
    }
    const text = acceptsText && typeof data === 'string' ? data : undefined;
    // Digits that parseInt64Text refused for how they are written (007, -0), not for their value.
    const oddlyWritten = text !== undefined && /^-?0[0-9]*$/.test(text);
    const outOfRange = !oddlyWritten && (isIntegerValue(data) || (text !== undefined && /^-?[0-9]+$/.test(text)));
    const hint = oddlyWritten
      ? '; write it in plain decimal, without leading zeros or -0'
      : outOfRange
        ? '; this one is out of range'
        : '';
    const message = `must be an integer ${INT64_RANGE} (int64)${hint}`;
    (validate as { errors?: Partial<ErrorObject>[] }).errors = [{ keyword: 'int64', message, params: {} }];
    return false;
  };
  return validate;
}

/**
 * The `decimalText` keyword: in a path or query string, an integer must be written
 * as one (an optional minus, digits, no leading zero). Ajv's coercion alone takes
 * anything `Number()` reads: 0x10, 1e2, 1.0, " 1". Its error reads like the type
 * error it stands in for, so the two are reported once.
 */
function decimalTextKeyword() {
  const validate = (_enabled: boolean, data: unknown): boolean => {
    if (typeof data !== 'string' || /^-?(?:0|[1-9][0-9]*)$/.test(data)) return true;
    (validate as { errors?: Partial<ErrorObject>[] }).errors = [
      { keyword: 'type', message: 'must be integer', params: { type: 'integer' } },
    ];
    return false;
  };
  return validate;
}

/** The `wellFormed` keyword: text with an unpaired surrogate could not be stored as UTF-8 (domain/text-rules.ts). */
function wellFormedKeyword() {
  const validate = (_enabled: boolean, data: unknown): boolean => {
    if (typeof data !== 'string' || !UNPAIRED_SURROGATE.test(data)) return true;
    (validate as { errors?: Partial<ErrorObject>[] }).errors = [
      { keyword: WELL_FORMED, message: WELL_FORMED_PROBLEM, params: {} },
    ];
    return false;
  };
  return validate;
}

/**
 * validateSchema: false skips compiling the meta-schema at every start-up, a sizeable share of it; our schemas
 * are static and test/http/schemas-valid.test.ts checks them instead (strict mode still rejects unknown keywords).
 */
export function createAjv(forText: boolean, validateSchema = false): Ajv {
  const ajv = new Ajv({
    coerceTypes: forText ? 'array' : false,
    allErrors: true,
    useDefaults: true,
    strict: true,
    unicodeRegExp: true,
    validateSchema,
  });
  ajv.addKeyword({
    keyword: 'int64',
    schemaType: 'boolean',
    errors: true,
    modifying: true,
    validate: int64Keyword(forText),
  });
  ajv.addKeyword({
    keyword: WELL_FORMED,
    schemaType: 'boolean',
    errors: true,
    validate: wellFormedKeyword(),
  });
  ajv.addKeyword({ keyword: 'decimalText', schemaType: 'boolean', errors: true, validate: decimalTextKeyword() });
  ajv.addKeyword('example');
  ajv.addFormat('int32', {
    type: 'number',
    validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31,
  });
  return ajv;
}

/**
 * Maps OpenAPI int64 integers to the `int64` keyword, leaving everything else as it
 * is. For text (`forText`: a path or query string), every other integer is checked
 * by `decimalText` before Ajv coerces it: the check sits first in an `allOf`, with
 * the type and its bounds second, because Ajv coerces a schema's `type` before any
 * other keyword of that schema runs. `default` stays outside, where Ajv applies it.
 */
export function toRuntimeSchema<T>(schema: T, forText = false): T {
  if (Array.isArray(schema)) return schema.map((item: unknown) => toRuntimeSchema(item, forText)) as T;
  if (schema === null || typeof schema !== 'object') return schema;
  const node = schema as Record<string, Json>;
  if (node.type === 'string' || (Array.isArray(node.type) && node.type.includes('string'))) {
    // Every string a client sends: an unpaired surrogate is refused (WELL_FORMED), whatever else the schema says.
    const { [WELL_FORMED]: _marked, ...rest } = node;
    const mapped = Object.fromEntries(
      Object.entries(rest).map(([key, value]) => [key, toRuntimeSchema(value, forText)]),
    );
    return { ...mapped, [WELL_FORMED]: true } as T;
  }
  if (node.type === 'integer' && node.format === 'int64') {
    const { type: _type, format: _format, ...rest } = node;
    return { ...rest, int64: true } as T;
  }
  if (forText && node.type === 'integer') {
    const { default: fallback, description, example, ...constraints } = node;
    const kept = Object.entries({ default: fallback, description, example }).filter(([, value]) => value !== undefined);
    return { ...Object.fromEntries(kept), allOf: [{ decimalText: true }, constraints] } as T;
  }
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, toRuntimeSchema(value, forText)])) as T;
}

/**
 * For `schemaController.compilersFactory.buildValidator`: unlike setValidatorCompiler, Fastify then does not
 * build its unused default Ajv compiler at every start. Fastify types this as @fastify/ajv-compiler's factory;
 * at run time it takes the shared schemas and returns a route-part compiler, hence the cast.
 */
type ValidatorFactory = NonNullable<
  NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']
>['buildValidator'];

// One pair for the process: a shared schema ($id) is added once and compiled once,
// however many encapsulation contexts (and apps, in tests) refer to it.
const bodyAjv = createAjv(false);
const urlAjv = createAjv(true);
const added = new Set<string>();

function routePartCompiler(sharedSchemas: Readonly<Record<string, object>> = {}): FastifySchemaCompiler<object> {
  for (const [id, schema] of Object.entries(sharedSchemas)) {
    if (added.has(id)) continue;
    added.add(id);
    bodyAjv.addSchema(toRuntimeSchema(schema, false));
    urlAjv.addSchema(toRuntimeSchema(schema, true));
  }
  return ({ schema, httpPart }) => {
    const forText = httpPart !== 'body';
    return (forText ? urlAjv : bodyAjv).compile(toRuntimeSchema(schema, forText));
  };
}

export const validatorFactory = routePartCompiler as unknown as ValidatorFactory;

function fieldName(error: FastifySchemaValidationError): string {
  const path = error.instancePath.replace(/^\//, '').replaceAll('/', '.');
  const missing = (error.params as { missingProperty?: string }).missingProperty;
  if (error.keyword === 'required' && missing !== undefined) return path === '' ? missing : `${path}.${missing}`;
  return path;
}

function describe(error: FastifySchemaValidationError, part: string): string {
  const params = error.params as { limit?: number };
  switch (error.keyword) {
    case 'maxItems':
      return part === 'body'
        ? `must have at most ${params.limit} items`
        : `must be given at most ${params.limit} times`;
    case 'required':
      return 'is required';
    case 'maxLength':
      return `must be at most ${params.limit} characters long`;
    case 'minLength':
      return params.limit === 1 ? 'must not be empty' : `must be at least ${params.limit} characters long`;
    case 'type': {
      // A list of types (`type: ['string', 'null']`) is said in words: "a string or null", not "a string,null".
      const type = (error.params as { type?: string | string[] }).type ?? 'valid';
      const types = Array.isArray(type) ? type : [type];
      return `must be ${types.map((one) => (one === 'null' ? one : `${/^[aeiou]/.test(one) ? 'an' : 'a'} ${one}`)).join(' or ')}`;
    }
    case 'pattern':
      return describePattern((error.params as { pattern?: string }).pattern);
    case 'minimum':
      return `must be at least ${params.limit}`;
    case 'maximum':
      return `must be at most ${params.limit}`;
    case 'enum':
      return `must be one of ${((error.params as { allowedValues?: unknown[] }).allowedValues ?? []).map((value) => `'${String(value)}'`).join(', ')}`;
    default:
      return error.message ?? 'is invalid';
  }
}

/** A header as its specification writes it (`last-event-id` -> `Last-Event-ID`), for messages. */
function headerName(name: string): string {
  return name
    .replace(/(^|-)([a-z])/g, (_all, dash: string, letter: string) => dash + letter.toUpperCase())
    .replace(/-Id$/, '-ID');
}

/** Turns Ajv's errors into one Error record that names every offending field. */
export function validationFailure(errors: FastifySchemaValidationError[], part: string): ApiError {
  const isRootTypeError = errors.some((e) => e.instancePath === '' && e.keyword === 'type');
  if (part === 'body' && isRootTypeError) {
    return failure('BODY_NOT_OBJECT');
  }
  // One problem per field: a value can break several rules at once (99999999999 for a
  // limit of at most 1000 is also out of int32), and the first one Ajv met says enough.
  const seen = new Set<string>();
  const problems: string[] = [];
  for (const error of errors) {
    // A repeated query parameter (tag=a&tag=b) is named as the parameter, not by the index of one of its values.
    const field =
      part === 'body'
        ? fieldName(error)
        : part === 'headers'
          ? headerName(fieldName(error))
          : fieldName(error).replace(/\.\d+$/, '');
    if (!seen.has(field)) problems.push(`${field} ${describe(error, part)}`);
    seen.add(field);
  }
  return failure(part === 'body' ? 'INVALID_FIELD' : 'INVALID_PARAMETER', [problems.join('; ')]);
}
