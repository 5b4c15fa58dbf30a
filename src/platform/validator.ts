import { Ajv, type Options } from 'ajv';
import ajvFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

/**
 * Two AJV instances. Bodies are validated strictly: no type coercion (a JSON `null` or `"5"` is not a boolean or
 * integer) and unknown properties are reported, never silently removed. Query strings, paths and headers arrive
 * as text, so they are coerced (`limit=5` is an integer). `verbose` lets the error mapper tell a null or missing
 * value from a wrong one; the value itself is never put into a response.
 */
// ajv-formats is CommonJS with a `default` export; under NodeNext the function sits one level down.
const addFormats = ajvFormats as unknown as typeof ajvFormats.default;

const common: Options = {
  allErrors: true,
  verbose: true,
  removeAdditional: false,
  useDefaults: true,
  strict: false,
  keywords: ['x-stability', 'example'],
};

function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({ ...common, ...options });
  addFormats(ajv, ['uuid', 'email', 'date-time', 'date', 'uri', 'iso-date-time']);
  return ajv;
}

const bodyAjv = makeAjv({ coerceTypes: false });
const textAjv = makeAjv({ coerceTypes: 'array' });

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : textAjv;
  return ajv.compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
};
