import { MigrationInterface, QueryRunner } from 'typeorm';

export class Foundation1795260121041 implements MigrationInterface {
  name = 'Foundation1795260121041';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "api_keys" (
                "id" varchar(36) PRIMARY KEY NOT NULL,
                "organisation_id" varchar(36) NOT NULL,
                "workspace_id" varchar(36),
                "user_id" varchar(36),
                "type" varchar(32) NOT NULL,
                "name" varchar(255) NOT NULL,
                "description" text,
                "key_hash" varchar(64) NOT NULL,
                "key_mask" varchar(32) NOT NULL,
                "previous_key_hash" varchar(64),
                "previous_key_expires_at" datetime,
                "status" varchar(16) NOT NULL DEFAULT ('active'),
                "scopes" text NOT NULL DEFAULT ('[]'),
                "defaults" text,
                "rate_limits" text,
                "usage_limits" text,
                "alert_emails" text,
                "expires_at" datetime,
                "creation_mode" varchar(8) NOT NULL DEFAULT ('api'),
                "created_by_user_id" varchar(36),
                "created_by_key_id" varchar(36),
                "last_rotated_at" datetime,
                "created_at" datetime NOT NULL DEFAULT (datetime('now')),
                "updated_at" datetime NOT NULL DEFAULT (datetime('now')),
                CONSTRAINT "UQ_57384430aa1959f4578046c9b81" UNIQUE ("key_hash"),
                CONSTRAINT "UQ_3a5d4e164cbc2303c3cd59cce0e" UNIQUE ("previous_key_hash")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_ea16e601d61fe3071fedf67cd6" ON "api_keys" ("status", "expires_at")
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_d882d754a98eb7e291bbeb12d6" ON "api_keys" ("organisation_id", "workspace_id")
        `);
    await queryRunner.query(`
            CREATE TABLE "audit_logs" (
                "id" varchar(36) PRIMARY KEY NOT NULL,
                "organisation_id" varchar(36),
                "workspace_id" varchar(36),
                "actor_type" varchar(16) NOT NULL,
                "user_id" varchar(36),
                "api_key_id" varchar(36),
                "action" varchar(64) NOT NULL,
                "resource_type" varchar(64) NOT NULL,
                "resource_id" varchar(255),
                "method" varchar(8) NOT NULL,
                "uri" varchar(2048) NOT NULL,
                "response_status_code" integer NOT NULL,
                "client_ip" varchar(64),
                "user_agent" varchar(512),
                "request_id" varchar(128) NOT NULL,
                "trace_id" varchar(128),
                "error_code" varchar(64),
                "request_body" text,
                "query_params" text,
                "created_at" datetime NOT NULL
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_f03e42c2a17da91961d1722e6c" ON "audit_logs" ("organisation_id", "created_at")
        `);
    await queryRunner.query(`
            CREATE TABLE "invites" (
                "id" varchar(36) PRIMARY KEY NOT NULL,
                "organisation_id" varchar(36) NOT NULL,
                "email" varchar(320) NOT NULL,
                "role" varchar(16) NOT NULL,
                "workspaces" text NOT NULL DEFAULT ('[]'),
                "workspace_api_key_details" text,
                "token_hash" varchar(64) NOT NULL,
                "status" varchar(16) NOT NULL DEFAULT ('pending'),
                "invited_by" varchar(36),
                "expires_at" datetime NOT NULL,
                "accepted_at" datetime,
                "created_at" datetime NOT NULL DEFAULT (datetime('now')),
                "updated_at" datetime NOT NULL DEFAULT (datetime('now')),
                CONSTRAINT "UQ_0843131f4ae91435709527a4f18" UNIQUE ("token_hash")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_ba7dc7dfe1c7216cc2443804e3" ON "invites" ("organisation_id", "email")
        `);
    await queryRunner.query(`
            CREATE TABLE "organisations" (
                "id" varchar(36) PRIMARY KEY NOT NULL,
                "name" varchar(255) NOT NULL,
                "slug" varchar(255) NOT NULL,
                "settings" text NOT NULL DEFAULT ('{}'),
                "created_at" datetime NOT NULL DEFAULT (datetime('now')),
                "updated_at" datetime NOT NULL DEFAULT (datetime('now')),
                CONSTRAINT "UQ_db67ac918db3917134d0c9edbb3" UNIQUE ("slug")
            )
        `);
    await queryRunner.query(`
            CREATE TABLE "users" (
                "id" varchar(36) PRIMARY KEY NOT NULL,
                "organisation_id" varchar(36) NOT NULL,
                "email" varchar(320) NOT NULL,
                "first_name" varchar(255),
                "last_name" varchar(255),
                "role" varchar(16) NOT NULL,
                "created_at" datetime NOT NULL DEFAULT (datetime('now')),
                "updated_at" datetime NOT NULL DEFAULT (datetime('now'))
            )
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "IDX_cf023cf528d8107c1d33fc258d" ON "users" ("organisation_id", "email")
        `);
    await queryRunner.query(`
            CREATE TABLE "workspace_members" (
                "id" varchar(36) PRIMARY KEY NOT NULL,
                "organisation_id" varchar(36) NOT NULL,
                "workspace_id" varchar(36) NOT NULL,
                "user_id" varchar(36) NOT NULL,
                "role" varchar(16) NOT NULL,
                "created_at" datetime NOT NULL DEFAULT (datetime('now')),
                "updated_at" datetime NOT NULL DEFAULT (datetime('now'))
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_4e83431119fa585fc7aa8b817d" ON "workspace_members" ("user_id")
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "IDX_4896b609c71ca5ad20ad662077" ON "workspace_members" ("workspace_id", "user_id")
        `);
    await queryRunner.query(`
            CREATE TABLE "workspaces" (
                "id" varchar(36) PRIMARY KEY NOT NULL,
                "organisation_id" varchar(36) NOT NULL,
                "name" varchar(255) NOT NULL,
                "slug" varchar(255) NOT NULL,
                "description" text,
                "status" varchar(16) NOT NULL DEFAULT ('active'),
                "is_default" boolean NOT NULL DEFAULT (0),
                "defaults" text,
                "usage_limits" text NOT NULL DEFAULT ('[]'),
                "rate_limits" text NOT NULL DEFAULT ('[]'),
                "settings" text NOT NULL DEFAULT ('{}'),
                "created_at" datetime NOT NULL DEFAULT (datetime('now')),
                "updated_at" datetime NOT NULL DEFAULT (datetime('now'))
            )
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "IDX_327b0a64eb0ec973141c99771b" ON "workspaces" ("organisation_id", "slug")
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP INDEX "IDX_327b0a64eb0ec973141c99771b"
        `);
    await queryRunner.query(`
            DROP TABLE "workspaces"
        `);
    await queryRunner.query(`
            DROP INDEX "IDX_4896b609c71ca5ad20ad662077"
        `);
    await queryRunner.query(`
            DROP INDEX "IDX_4e83431119fa585fc7aa8b817d"
        `);
    await queryRunner.query(`
            DROP TABLE "workspace_members"
        `);
    await queryRunner.query(`
            DROP INDEX "IDX_cf023cf528d8107c1d33fc258d"
        `);
    await queryRunner.query(`
            DROP TABLE "users"
        `);
    await queryRunner.query(`
            DROP TABLE "organisations"
        `);
    await queryRunner.query(`
            DROP INDEX "IDX_ba7dc7dfe1c7216cc2443804e3"
        `);
    await queryRunner.query(`
            DROP TABLE "invites"
        `);
    await queryRunner.query(`
            DROP INDEX "IDX_f03e42c2a17da91961d1722e6c"
        `);
    await queryRunner.query(`
            DROP TABLE "audit_logs"
        `);
    await queryRunner.query(`
            DROP INDEX "IDX_d882d754a98eb7e291bbeb12d6"
        `);
    await queryRunner.query(`
            DROP INDEX "IDX_ea16e601d61fe3071fedf67cd6"
        `);
    await queryRunner.query(`
            DROP TABLE "api_keys"
        `);
  }
}
