// Entities pick their column types from DATABASE_URL when they load, so it is set before any import.
const postgresUrl = process.env.SWITCHBOARD_TEST_POSTGRES_URL ?? '';
process.env.SWITCHBOARD_TEST_DIALECT = 'postgres';
if (postgresUrl) process.env.DATABASE_URL = postgresUrl;
else delete process.env.DATABASE_URL;
if (process.env.SWITCHBOARD_TEST_REDIS_URL) process.env.REDIS_URL = process.env.SWITCHBOARD_TEST_REDIS_URL;
