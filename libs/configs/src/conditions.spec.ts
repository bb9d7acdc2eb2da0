import { ConditionInput, matchesQuery } from './conditions';
import type { ConditionQuery } from './config.types';

const input: ConditionInput = {
  metadata: { plan: 'paid', tier: '3', env: 'staging', beta: 'true' },
  params: { model: 'gpt-4o', temperature: 0.9, messages: [{ role: 'user' }], options: { mode: 'fast' } },
  route: 'chat.completions',
  path: '/v1/chat/completions?x=1',
};

describe('matchesQuery', () => {
  it.each<[string, ConditionQuery, boolean]>([
    ['a bare value is $eq', { 'metadata.plan': 'paid' }, true],
    ['$eq on metadata', { 'metadata.plan': { $eq: 'free' } }, false],
    ['$ne', { 'metadata.plan': { $ne: 'free' } }, true],
    ['$in', { 'params.model': { $in: ['gpt-4o', 'gpt-4o-mini'] } }, true],
    ['$nin', { 'params.model': { $nin: ['gpt-4o'] } }, false],
    ['$regex', { 'metadata.env': { $regex: '^stag' } }, true],
    ['$regex that does not match', { 'params.model': { $regex: '^claude' } }, false],
    ['$gt on a number param', { 'params.temperature': { $gt: 0.7 } }, true],
    ['$gte', { 'params.temperature': { $gte: 0.9 } }, true],
    ['$lt', { 'params.temperature': { $lt: 0.9 } }, false],
    ['$lte', { 'params.temperature': { $lte: 0.9 } }, true],
    ['numeric metadata strings compare as numbers', { 'metadata.tier': { $gt: 2, $lt: 10 } }, true],
    ['a numeric $eq matches a metadata string', { 'metadata.tier': { $eq: 3 } }, true],
    ['a boolean $eq matches a metadata string', { 'metadata.beta': true }, true],
    ['strings compare as strings', { 'params.model': { $gte: 'gpt' } }, true],
    ['a number cannot compare with a non-numeric string', { 'params.model': { $gt: 1 } }, false],
    ['every operator on a field must hold', { 'params.temperature': { $gt: 0.5, $lt: 0.8 } }, false],
    ['nested params by dotted path', { 'params.options.mode': 'fast' }, true],
    ['array elements by index', { 'params.messages.0.role': 'user' }, true],
    ['the route', { route: 'chat.completions' }, true],
    ['the path, without its query string', { 'url.pathname': '/v1/chat/completions' }, true],
    ['a missing field fails $eq', { 'metadata.region': 'eu' }, false],
    ['a missing field passes $ne', { 'metadata.region': { $ne: 'eu' } }, true],
    ['a missing field passes $nin', { 'metadata.region': { $nin: ['eu'] } }, true],
    ['a missing field equals null', { 'metadata.region': null }, true],
    ['a missing field fails $regex', { 'metadata.region': { $regex: '.*' } }, false],
    ['a missing field fails $gt', { 'metadata.region': { $gt: 0 } }, false],
    ['$and needs all', { $and: [{ 'metadata.plan': 'paid' }, { 'params.model': 'x' }] }, false],
    ['$or needs one', { $or: [{ 'metadata.plan': 'free' }, { 'params.model': 'gpt-4o' }] }, true],
    ['$or with none', { $or: [{ 'metadata.plan': 'free' }, { 'params.model': 'x' }] }, false],
    [
      'nested $and inside $or',
      { $or: [{ $and: [{ 'metadata.plan': 'paid' }, { 'metadata.env': 'staging' }] }, { route: 'x' }] },
      true,
    ],
    [
      'fields and $or together must all hold',
      { 'metadata.plan': 'free', $or: [{ route: 'chat.completions' }] },
      false,
    ],
  ])('%s', (_title, query, expected) => {
    expect(matchesQuery(query, input)).toBe(expected);
  });

  it('reads nothing from absent metadata and params', () => {
    expect(matchesQuery({ 'metadata.plan': 'paid' }, {})).toBe(false);
    expect(matchesQuery({ 'params.model': { $ne: 'x' } }, {})).toBe(true);
  });
});
