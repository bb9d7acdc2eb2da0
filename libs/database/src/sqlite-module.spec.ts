import {
  SQLITE_LEGACY_MODULE,
  SQLITE_NAPI_MODULE,
  nodeMajor,
  sqliteModule,
  sqliteModuleName,
} from './sqlite-module';

describe('the better-sqlite3 module for this Node', () => {
  it('reads the major version', () => {
    expect(nodeMajor('20.20.2')).toBe(20);
    expect(nodeMajor('24.21.0')).toBe(24);
  });

  it('loads the Node-API build from Node 22 on, the ObjectWrap build before', () => {
    const expected = nodeMajor() >= 22 ? SQLITE_NAPI_MODULE : SQLITE_LEGACY_MODULE;
    expect(sqliteModuleName()).toBe(expected);
  });

  it('answers a working constructor', () => {
    const Database = sqliteModule();
    const db = new Database(':memory:');
    try {
      expect(db.prepare('SELECT 1 + 1 AS two').get()).toEqual({ two: 2 });
    } finally {
      db.close();
    }
  });
});
