import { parseTagsFilter, tagsProblem } from './tags';

describe('tags', () => {
  it('accepts string pairs with plain keys', () => {
    expect(tagsProblem({ env: 'prod', 'team.name': 'core' })).toBeNull();
    expect(tagsProblem({ env: 1 })).toMatch(/must be a string/);
    expect(tagsProblem({ 'bad"key': 'x' })).toMatch(/key/);
    expect(tagsProblem(['x'])).toMatch(/object/);
    expect(tagsProblem(Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])))).toMatch(
      /at most 50/,
    );
  });

  it('the list filter is a JSON object, refused with the field named otherwise', () => {
    expect(parseTagsFilter(undefined)).toBeNull();
    expect(parseTagsFilter('{"env":"prod"}')).toEqual({ env: 'prod' });
    expect(() => parseTagsFilter('env=prod')).toThrow(expect.objectContaining({ param: 'tags' }));
    expect(() => parseTagsFilter('{"env":2}')).toThrow(expect.objectContaining({ param: 'tags' }));
  });
});
