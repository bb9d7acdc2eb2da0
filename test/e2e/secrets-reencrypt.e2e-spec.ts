/**
 * Master key rotation: the re-encryption command against a real database of each dialect, with
 * the app's schema migrated and scratch tables holding sealed values (whole column values and
 * string leaves inside JSON).
 */
import { DataSource } from 'typeorm';
import { AppConfig, loadConfig } from '../../libs/config/src';
import { buildDataSourceOptions } from '../../libs/database/src';
import { SecretCipher, reencryptSecrets } from '../../libs/secrets/src';
import { runReencryptCommand } from '../../libs/secrets/src/reencrypt/reencrypt-command';
import { TestDatabase, createTestDatabase, currentDialect, describeE2E } from '../support/test-app';

const KEY_A = 'a1'.repeat(32);
const KEY_B = Buffer.alloc(32, 0xb2).toString('base64');
const KEY_C = 'c3'.repeat(32);

const postgres = currentDialect() === 'postgres';
const p = (i: number) => (postgres ? `$${i}` : '?');

describeE2E('secrets: master key re-encryption', () => {
  let db: TestDatabase;
  let database: AppConfig['database'];
  let dataSource: DataSource;
  const cipherA = new SecretCipher(KEY_A);
  const rotated = new SecretCipher(KEY_B, [KEY_A]);

  async function open(): Promise<DataSource> {
    return new DataSource(buildDataSourceOptions(database)).initialize();
  }

  async function rows(table: string, order = 'id'): Promise<Record<string, any>[]> {
    return dataSource.query(`SELECT * FROM ${table} ORDER BY ${order}`);
  }

  /** Sealed under key A: three plain values, JSON with nested leaves, and a table without a primary key. */
  async function seed(
    prefix: string,
  ): Promise<{ plain: string[]; jsonKey: string; jsonNested: string; loose: string }> {
    const json = postgres ? 'jsonb' : 'text';
    await dataSource.query(
      `CREATE TABLE ${prefix}_plain (id varchar(36) PRIMARY KEY NOT NULL, api_key text, note varchar(255), counter integer)`,
    );
    await dataSource.query(
      `CREATE TABLE ${prefix}_json (id varchar(36) PRIMARY KEY NOT NULL, settings ${json}${postgres ? ', legacy json' : ''})`,
    );
    await dataSource.query(`CREATE TABLE ${prefix}_nopk (value text)`);
    const plain = ['sk-one', 'sk-two', 'sk-three'];
    for (const [i, secret] of plain.entries()) {
      await dataSource.query(
        `INSERT INTO ${prefix}_plain (id, api_key, note, counter) VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)})`,
        [`r${i}`, cipherA.encrypt(secret), `note ${i}`, i],
      );
    }
    // Already current, null, plain text mentioning the prefix, and a malformed look-alike.
    await dataSource.query(
      `INSERT INTO ${prefix}_plain (id, api_key, note) VALUES (${p(1)}, ${p(2)}, ${p(3)})`,
      ['r3', rotated.encrypt('sk-current'), 'the format is enc:v1:<key id>:...'],
    );
    await dataSource.query(
      `INSERT INTO ${prefix}_plain (id, api_key, note) VALUES (${p(1)}, ${p(2)}, NULL)`,
      ['r4', 'enc:v1:not-a-real-value'],
    );
    await dataSource.query(`INSERT INTO ${prefix}_plain (id, api_key) VALUES (${p(1)}, NULL)`, ['r5']);
    const sealedKey = cipherA.encrypt('sk-json-key');
    const sealedNested = cipherA.encrypt('sk-json-nested');
    // Raw text keeps key order and a number JSON.parse would round; only the sealed leaves may change.
    const settings = `{"provider":"openai","key":"${sealedKey}","nested":{"list":["${sealedNested}",42,"plain"],"same":"${sealedKey}"},"big":12345678901234567890}`;
    await dataSource.query(
      `INSERT INTO ${prefix}_json (id, settings${postgres ? ', legacy' : ''}) VALUES (${p(1)}, ${p(2)}${postgres ? `, ${p(3)}` : ''})`,
      postgres ? ['j0', settings, settings] : ['j0', settings],
    );
    await dataSource.query(`INSERT INTO ${prefix}_json (id, settings) VALUES (${p(1)}, ${p(2)})`, [
      'j1',
      '{"provider":"anthropic","note":"no secrets here"}',
    ]);
    const loose = cipherA.encrypt('sk-loose');
    await dataSource.query(`INSERT INTO ${prefix}_nopk (value) VALUES (${p(1)})`, [loose]);
    return { plain, jsonKey: sealedKey, jsonNested: sealedNested, loose };
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    database = loadConfig({ DATABASE_URL: db.url }).database;
    dataSource = await open();
    await dataSource.runMigrations({ transaction: 'each' });
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  it('re-seals every value under the new key, in plain and JSON columns, and a second run changes nothing', async () => {
    const seeded = await seed('sb_rot');

    const dry = await reencryptSecrets(dataSource, database, rotated, { dryRun: true });
    expect(dry.dryRun).toBe(true);
    expect(dry.failures).toEqual([]);
    expect(dry.rewritten).toBe(3 + (postgres ? 6 : 3) + 1);
    expect((await rows('sb_rot_plain'))[0].api_key.startsWith(`enc:v1:${cipherA.currentKeyId}:`)).toBe(true);

    const report = await reencryptSecrets(dataSource, database, rotated);
    expect(report.failures).toEqual([]);
    expect(report.currentKeyId).toBe(rotated.currentKeyId);
    const column = (table: string, name: string) =>
      report.columns.find((c) => c.table === table && c.column === name);
    expect(column('sb_rot_plain', 'api_key')).toMatchObject({
      sealed: 5 - 1,
      current: 1,
      rewritten: 3,
      malformed: 1,
    });
    expect(column('sb_rot_plain', 'note')).toBeUndefined();
    expect(column('sb_rot_json', 'settings')).toMatchObject({ sealed: 3, current: 0, rewritten: 3 });
    if (postgres) expect(column('sb_rot_json', 'legacy')).toMatchObject({ sealed: 3, rewritten: 3 });
    expect(column('sb_rot_nopk', 'value')).toMatchObject({ sealed: 1, rewritten: 1 });
    expect(report.rewritten).toBe(dry.rewritten);

    const plain = await rows('sb_rot_plain');
    expect(plain.slice(0, 3).map((row) => rotated.decrypt(row.api_key))).toEqual(seeded.plain);
    for (const row of plain.slice(0, 4)) expect(SecretCipher.keyIdOf(row.api_key)).toBe(rotated.currentKeyId);
    expect(rotated.decrypt(plain[3].api_key)).toBe('sk-current');
    expect(plain[4].api_key).toBe('enc:v1:not-a-real-value');
    expect(plain[3].note).toBe('the format is enc:v1:<key id>:...');
    expect(plain.map((row) => Number(row.counter ?? -1))).toEqual([0, 1, 2, -1, -1, -1]);
    expect(plain[5].api_key).toBeNull();

    const [json, untouched] = await rows('sb_rot_json');
    const text = typeof json.settings === 'string' ? json.settings : JSON.stringify(json.settings);
    const parsed = JSON.parse(text);
    expect(rotated.decrypt(parsed.key)).toBe('sk-json-key');
    expect(rotated.decrypt(parsed.nested.list[0])).toBe('sk-json-nested');
    expect(parsed.nested.same).toBe(parsed.key);
    expect(parsed.nested.list.slice(1)).toEqual([42, 'plain']);
    expect(text).not.toContain(seeded.jsonKey);
    if (!postgres) {
      // Byte for byte apart from the leaves: the number JSON.parse would round survives.
      expect(text.startsWith('{"provider":"openai","key":"enc:v1:')).toBe(true);
      expect(text.endsWith(',"big":12345678901234567890}')).toBe(true);
    } else {
      const legacy = typeof json.legacy === 'string' ? JSON.parse(json.legacy) : json.legacy;
      expect(rotated.decrypt(legacy.nested.list[0])).toBe('sk-json-nested');
    }
    const other =
      typeof untouched.settings === 'string' ? JSON.parse(untouched.settings) : untouched.settings;
    expect(other).toEqual({ provider: 'anthropic', note: 'no secrets here' });

    const [loose] = await dataSource.query('SELECT value FROM sb_rot_nopk');
    expect(rotated.decrypt(loose.value)).toBe('sk-loose');
    expect(() => new SecretCipher(KEY_B).decrypt(loose.value)).not.toThrow();

    const again = await reencryptSecrets(dataSource, database, rotated);
    expect(again.failures).toEqual([]);
    expect(again.rewritten).toBe(0);
    expect(again.columns.find((c) => c.table === 'sb_rot_plain' && c.column === 'api_key')).toMatchObject({
      rewritten: 0,
      current: 4,
    });
  });

  it('a table holding a value of an unknown key is left whole and reported; the others are done', async () => {
    await dataSource.query(`CREATE TABLE sb_bad_mixed (id varchar(36) PRIMARY KEY NOT NULL, secret text)`);
    await dataSource.query(`CREATE TABLE sb_bad_fine (id varchar(36) PRIMARY KEY NOT NULL, secret text)`);
    const underA = cipherA.encrypt('sk-a');
    const underC = new SecretCipher(KEY_C).encrypt('sk-c');
    await dataSource.query(
      `INSERT INTO sb_bad_mixed (id, secret) VALUES (${p(1)}, ${p(2)}), (${p(3)}, ${p(4)})`,
      ['a', underA, 'b', underC],
    );
    await dataSource.query(`INSERT INTO sb_bad_fine (id, secret) VALUES (${p(1)}, ${p(2)})`, [
      'a',
      cipherA.encrypt('sk-fine'),
    ]);

    const report = await reencryptSecrets(dataSource, database, rotated);
    expect(report.failures).toHaveLength(1);
    expect(report.failures[0]).toMatchObject({ table: 'sb_bad_mixed', column: 'secret' });
    expect(report.failures[0].message).toContain(
      'neither GATEWAY_ENCRYPTION_KEY nor in GATEWAY_ENCRYPTION_KEYS_PREVIOUS',
    );
    expect((await rows('sb_bad_mixed')).map((row) => row.secret)).toEqual([underA, underC]);
    const [fine] = await rows('sb_bad_fine');
    expect(rotated.decrypt(fine.secret)).toBe('sk-fine');
    await dataSource.query('DROP TABLE sb_bad_mixed');
  });

  it('two runs at once take turns under the migrations lock: every value is rewritten exactly once', async () => {
    await dataSource.query(`CREATE TABLE sb_lock (id varchar(36) PRIMARY KEY NOT NULL, secret text)`);
    for (let i = 0; i < 20; i++) {
      await dataSource.query(`INSERT INTO sb_lock (id, secret) VALUES (${p(1)}, ${p(2)})`, [
        `k${i}`,
        cipherA.encrypt(`sk-${i}`),
      ]);
    }
    const second = await open();
    try {
      const [one, two] = await Promise.all([
        reencryptSecrets(dataSource, database, rotated),
        reencryptSecrets(second, database, rotated),
      ]);
      const lock = (report: typeof one) => report.columns.find((c) => c.table === 'sb_lock')?.rewritten ?? 0;
      expect(lock(one) + lock(two)).toBe(20);
      expect(Math.min(lock(one), lock(two))).toBe(0);
      expect(one.failures).toEqual([]);
      expect(two.failures).toEqual([]);
    } finally {
      await second.destroy();
    }
    const values = await rows('sb_lock');
    expect(values.map((row) => rotated.decrypt(row.secret))).toEqual(
      Array.from({ length: 20 }, (_, i) => `sk-${i}`).sort(),
    );
  });

  it('the command reads the keys from the environment, supports --dry-run, and prints counts per column', async () => {
    await dataSource.query(`CREATE TABLE sb_cli (id varchar(36) PRIMARY KEY NOT NULL, secret text)`);
    await dataSource.query(`INSERT INTO sb_cli (id, secret) VALUES (${p(1)}, ${p(2)})`, [
      'x',
      cipherA.encrypt('sk-cli'),
    ]);
    const env = {
      DATABASE_URL: db.url,
      GATEWAY_ENCRYPTION_KEY: KEY_B,
      GATEWAY_ENCRYPTION_KEYS_PREVIOUS: `${'d4'.repeat(32)},${KEY_A}`,
      GATEWAY_DATA_DIR: '/nonexistent-data-dir',
    };
    const out: string[] = [];
    const io = { out: (line: string) => out.push(line), err: (line: string) => out.push(`ERR ${line}`) };

    const dry = await runReencryptCommand(['--dry-run'], env, io);
    expect(dry.code).toBe(0);
    expect(out.join('\n')).toContain('sb_cli.secret: 1 encrypted, 0 already current, would re-encrypt 1');
    expect(SecretCipher.keyIdOf((await rows('sb_cli'))[0].secret)).toBe(cipherA.currentKeyId);

    out.length = 0;
    const run = await runReencryptCommand([], env, io);
    expect(run.code).toBe(0);
    expect(out[0]).toBe(`Current master key id: ${rotated.currentKeyId}`);
    expect(out.join('\n')).toContain('sb_cli.secret: 1 encrypted, 0 already current, re-encrypted 1');
    expect(rotated.decrypt((await rows('sb_cli'))[0].secret)).toBe('sk-cli');

    out.length = 0;
    expect((await runReencryptCommand(['--frobnicate'], env, io)).code).toBe(2);
    expect(out[0]).toContain("Unknown argument '--frobnicate'");
    out.length = 0;
    const noKey = await runReencryptCommand(
      [],
      { DATABASE_URL: db.url, GATEWAY_DATA_DIR: '/nonexistent-data-dir' },
      io,
    );
    expect(noKey.code).toBe(1);
    expect(out.join('\n')).toContain('GATEWAY_ENCRYPTION_KEY is not set');
  });
});
