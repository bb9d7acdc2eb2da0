// Entities pick their column types from DATABASE_URL when they load, so it is set before any import.
delete process.env.DATABASE_URL;
delete process.env.REDIS_URL;
process.env.SWITCHBOARD_TEST_DIALECT = 'sqlite';
