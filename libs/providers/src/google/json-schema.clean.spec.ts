import { cleanSchemaForGemini } from './json-schema.clean';

describe('cleanSchemaForGemini', () => {
  it('drops keywords Gemini rejects and keeps the ones it accepts, at every depth', () => {
    const schema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      additionalProperties: false,
      properties: {
        city: { type: 'string', description: 'City name', examples: ['Paris'], format: 'hostname' },
        when: { type: 'string', format: 'date-time' },
        tags: { type: 'array', items: { type: 'string', additionalProperties: false }, minItems: 1 },
        additionalProperties: { type: 'boolean' },
      },
      required: ['city', 'ghost'],
      strict: true,
    };
    expect(cleanSchemaForGemini(schema)).toEqual({
      type: 'object',
      properties: {
        city: { type: 'string', description: 'City name' },
        when: { type: 'string', format: 'date-time' },
        tags: { type: 'array', items: { type: 'string' }, minItems: 1 },
        // A property *named* like a keyword is data, not a keyword, and stays.
        additionalProperties: { type: 'boolean' },
      },
      required: ['city'],
    });
  });

  it('turns type lists and null branches into nullable, and const into enum', () => {
    expect(
      cleanSchemaForGemini({
        type: 'object',
        properties: {
          a: { type: ['string', 'null'] },
          b: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
          c: { const: 'fixed' },
          d: { type: 'integer', enum: [1, 2] },
        },
      }),
    ).toEqual({
      type: 'object',
      properties: {
        a: { type: 'string', nullable: true },
        b: { type: 'integer', nullable: true },
        c: { type: 'string', enum: ['fixed'] },
        d: { type: 'string', enum: ['1', '2'] },
      },
    });
  });

  it('inlines $ref from $defs and cuts cycles', () => {
    const schema = {
      type: 'object',
      $defs: {
        Point: { type: 'object', properties: { x: { type: 'number' } }, additionalProperties: false },
        Node: { type: 'object', properties: { next: { $ref: '#/$defs/Node' } } },
      },
      properties: { at: { $ref: '#/$defs/Point', description: 'where' }, list: { $ref: '#/$defs/Node' } },
    };
    const cleaned = cleanSchemaForGemini(schema);
    expect(cleaned.properties).toMatchObject({
      at: { type: 'object', properties: { x: { type: 'number' } }, description: 'where' },
    });
    expect(JSON.stringify(cleaned)).not.toContain('$ref');
    expect(JSON.stringify(cleaned)).not.toContain('$defs');
  });
});
