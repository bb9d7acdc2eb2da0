import { isRecord, type JsonObject } from '../shared/json';

/**
 * Keywords Gemini's `Schema` (an OpenAPI 3.0 subset) accepts. Anything else (`additionalProperties`,
 * `$schema`, `const`, `examples`, `strict`, ...) makes the whole request fail with 400, so the
 * schema is rebuilt from this list rather than by deleting known offenders.
 */
const ALLOWED_KEYWORDS = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'items',
  'minItems',
  'maxItems',
  'properties',
  'required',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
  'anyOf',
  'propertyOrdering',
  'default',
  'example',
]);

/** Gemini rejects string formats other than these two. */
const STRING_FORMATS = new Set(['enum', 'date-time']);

/** Deep `$ref` chains are resolved inline; a cycle is cut here instead of recursing forever. */
const MAX_REF_DEPTH = 16;

/** Rewrites a JSON Schema (OpenAI tools, `response_format`) into the subset Gemini accepts. */
export function cleanSchemaForGemini(schema: unknown): JsonObject {
  if (!isRecord(schema)) return { type: 'object', properties: {} };
  const definitions = { ...asDefinitions(schema.definitions), ...asDefinitions(schema.$defs) };
  return clean(schema, definitions, 0);
}

function asDefinitions(value: unknown): JsonObject {
  return isRecord(value) ? value : {};
}

function resolveRef(ref: string, definitions: JsonObject): unknown {
  const match = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(ref);
  return match ? definitions[decodeURIComponent(match[1])] : undefined;
}

function clean(schema: JsonObject, definitions: JsonObject, depth: number): JsonObject {
  if (typeof schema.$ref === 'string') {
    const target = depth < MAX_REF_DEPTH ? resolveRef(schema.$ref, definitions) : undefined;
    // An unresolvable or cyclic reference degrades to an unconstrained object, which Gemini accepts.
    if (!isRecord(target)) return { type: 'object' };
    const merged: JsonObject = { ...target };
    if (typeof schema.description === 'string') merged.description = schema.description;
    return clean(merged, definitions, depth + 1);
  }

  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (!ALLOWED_KEYWORDS.has(key)) continue;
    switch (key) {
      case 'properties':
        if (isRecord(value)) {
          const properties: JsonObject = {};
          for (const [name, property] of Object.entries(value)) {
            properties[name] = isRecord(property) ? clean(property, definitions, depth) : {};
          }
          out.properties = properties;
        }
        break;
      case 'items':
        if (isRecord(value)) out.items = clean(value, definitions, depth);
        break;
      case 'anyOf':
        if (Array.isArray(value)) out.anyOf = cleanVariants(value, definitions, depth);
        break;
      default:
        out[key] = value;
    }
  }

  // JSON Schema spells "nullable" as a type list or a null branch; Gemini wants `nullable: true`.
  if (Array.isArray(schema.type)) {
    const types = schema.type.filter((type): type is string => typeof type === 'string');
    const nonNull = types.filter((type) => type !== 'null');
    if (nonNull.length === 1) out.type = nonNull[0];
    else if (nonNull.length === 0) delete out.type;
    else {
      delete out.type;
      out.anyOf = nonNull.map((type) => ({ type }));
    }
    if (nonNull.length < types.length) out.nullable = true;
  }
  if (Array.isArray(schema.oneOf) && out.anyOf === undefined) {
    out.anyOf = cleanVariants(schema.oneOf, definitions, depth);
  }
  if (Array.isArray(out.anyOf)) {
    const variants = out.anyOf.filter((variant) => !(isRecord(variant) && variant.type === 'null'));
    if (variants.length < out.anyOf.length) out.nullable = true;
    if (variants.length === 1 && isRecord(variants[0])) {
      delete out.anyOf;
      Object.assign(out, variants[0]);
    } else {
      out.anyOf = variants;
    }
  }
  if (schema.const !== undefined && out.enum === undefined) out.enum = [schema.const];
  if (Array.isArray(out.enum)) {
    // Gemini's enum is string-only.
    out.enum = out.enum.map((value) => String(value));
    if (out.type === undefined || out.type === 'integer' || out.type === 'number') out.type = 'string';
  }
  if (out.type === 'string' && typeof out.format === 'string' && !STRING_FORMATS.has(out.format)) {
    delete out.format;
  }
  if (Array.isArray(out.required) && isRecord(out.properties)) {
    const properties = out.properties;
    out.required = out.required.filter((name) => typeof name === 'string' && name in properties);
  }
  return out;
}

function cleanVariants(variants: unknown[], definitions: JsonObject, depth: number): JsonObject[] {
  return variants.filter(isRecord).map((variant) => clean(variant, definitions, depth));
}
