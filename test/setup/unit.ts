// Unit tests are dialect-free: entities load with SQLite column types whatever DATABASE_URL the
// run was given (the e2e-postgres project uses it). REDIS_URL stays for the Redis-backed units.
delete process.env.DATABASE_URL;
