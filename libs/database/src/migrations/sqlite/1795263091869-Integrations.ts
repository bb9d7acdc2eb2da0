import { MigrationInterface, QueryRunner } from "typeorm";

export class Integrations1795263091869 implements MigrationInterface {
    name = 'Integrations1795263091869'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            CREATE TABLE "integration_models" (
                "id" varchar(36) PRIMARY KEY NOT NULL,
                "organisation_id" varchar(36) NOT NULL,
                "integration_id" varchar(36) NOT NULL,
                "slug" varchar(255) NOT NULL,
                "enabled" boolean NOT NULL DEFAULT (1),
                "is_custom" boolean NOT NULL DEFAULT (0),
                "is_finetune" boolean NOT NULL DEFAULT (0),
                "base_model_slug" varchar(255),
                "configurations" text,
                "pricing_config" text,
                "created_at" datetime NOT NULL DEFAULT (datetime('now')),
                "updated_at" datetime NOT NULL DEFAULT (datetime('now'))
            )
        `);
        await queryRunner.query(`
            CREATE UNIQUE INDEX "IDX_2e920887855404bae1df68887d" ON "integration_models" ("integration_id", "slug")
        `);
        await queryRunner.query(`
            CREATE TABLE "integrations" (
                "id" varchar(36) PRIMARY KEY NOT NULL,
                "organisation_id" varchar(36) NOT NULL,
                "workspace_id" varchar(36),
                "slug" varchar(255) NOT NULL,
                "name" varchar(255) NOT NULL,
                "description" text,
                "ai_provider_id" varchar(64) NOT NULL,
                "status" varchar(16) NOT NULL DEFAULT ('active'),
                "key_encrypted" text,
                "key_mask" varchar(64),
                "configurations" text NOT NULL DEFAULT ('{}'),
                "secret_configurations" text,
                "secret_mappings" text NOT NULL DEFAULT ('[]'),
                "pricing_adjustments" text,
                "tags" text NOT NULL DEFAULT ('{}'),
                "allow_all_models" boolean NOT NULL DEFAULT (1),
                "global_workspace_access" text,
                "created_by_user_id" varchar(36),
                "created_by_key_id" varchar(36),
                "created_at" datetime NOT NULL DEFAULT (datetime('now')),
                "updated_at" datetime NOT NULL DEFAULT (datetime('now'))
            )
        `);
        await queryRunner.query(`
            CREATE UNIQUE INDEX "IDX_38da266778b97b46a5ec21a057" ON "integrations" ("organisation_id", "slug")
        `);
        await queryRunner.query(`
            CREATE TABLE "integration_workspaces" (
                "id" varchar(36) PRIMARY KEY NOT NULL,
                "organisation_id" varchar(36) NOT NULL,
                "integration_id" varchar(36) NOT NULL,
                "workspace_id" varchar(36) NOT NULL,
                "enabled" boolean NOT NULL DEFAULT (1),
                "usage_limits" text,
                "rate_limits" text,
                "created_at" datetime NOT NULL DEFAULT (datetime('now')),
                "updated_at" datetime NOT NULL DEFAULT (datetime('now'))
            )
        `);
        await queryRunner.query(`
            CREATE INDEX "IDX_9a7261433f5876020c6bbfe534" ON "integration_workspaces" ("workspace_id")
        `);
        await queryRunner.query(`
            CREATE UNIQUE INDEX "IDX_bf84df89887286060b7e708fc3" ON "integration_workspaces" ("integration_id", "workspace_id")
        `);
        await queryRunner.query(`
            CREATE TABLE "providers" (
                "id" varchar(36) PRIMARY KEY NOT NULL,
                "organisation_id" varchar(36) NOT NULL,
                "workspace_id" varchar(36) NOT NULL,
                "integration_id" varchar(36),
                "kind" varchar(16) NOT NULL DEFAULT ('provider'),
                "slug" varchar(255) NOT NULL,
                "name" varchar(255) NOT NULL,
                "note" text,
                "ai_provider_id" varchar(64) NOT NULL,
                "key_encrypted" text,
                "key_mask" varchar(64),
                "configurations" text NOT NULL DEFAULT ('{}'),
                "secret_configurations" text,
                "secret_mappings" text NOT NULL DEFAULT ('[]'),
                "tags" text NOT NULL DEFAULT ('{}'),
                "usage_limits" text,
                "rate_limits" text,
                "expires_at" datetime,
                "status" varchar(16) NOT NULL DEFAULT ('active'),
                "is_default" boolean NOT NULL DEFAULT (0),
                "created_by_user_id" varchar(36),
                "created_by_key_id" varchar(36),
                "created_at" datetime NOT NULL DEFAULT (datetime('now')),
                "updated_at" datetime NOT NULL DEFAULT (datetime('now'))
            )
        `);
        await queryRunner.query(`
            CREATE INDEX "IDX_db5c470fda756c38c8d9ad29e9" ON "providers" ("organisation_id", "workspace_id")
        `);
        await queryRunner.query(`
            CREATE INDEX "IDX_25446a73938e1b11ec5c88e5bc" ON "providers" ("integration_id")
        `);
        await queryRunner.query(`
            CREATE UNIQUE INDEX "IDX_b2a31523e0a5387a8e8c3757d9" ON "providers" ("workspace_id", "slug")
        `);
        await queryRunner.query(`
            CREATE TABLE "secret_references" (
                "id" varchar(36) PRIMARY KEY NOT NULL,
                "organisation_id" varchar(36) NOT NULL,
                "slug" varchar(255) NOT NULL,
                "name" varchar(255) NOT NULL,
                "description" varchar(1024),
                "manager_type" varchar(32) NOT NULL,
                "auth_config_encrypted" text NOT NULL,
                "secret_path" varchar(1024) NOT NULL,
                "secret_key" varchar(255),
                "allow_all_workspaces" boolean NOT NULL DEFAULT (1),
                "allowed_workspaces" text NOT NULL DEFAULT ('[]'),
                "tags" text,
                "status" varchar(16) NOT NULL DEFAULT ('active'),
                "created_by_user_id" varchar(36),
                "created_by_key_id" varchar(36),
                "created_at" datetime NOT NULL DEFAULT (datetime('now')),
                "updated_at" datetime NOT NULL DEFAULT (datetime('now'))
            )
        `);
        await queryRunner.query(`
            CREATE UNIQUE INDEX "IDX_eec1ba9982a268fe0652b79720" ON "secret_references" ("organisation_id", "slug")
        `);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            DROP INDEX "IDX_eec1ba9982a268fe0652b79720"
        `);
        await queryRunner.query(`
            DROP TABLE "secret_references"
        `);
        await queryRunner.query(`
            DROP INDEX "IDX_b2a31523e0a5387a8e8c3757d9"
        `);
        await queryRunner.query(`
            DROP INDEX "IDX_25446a73938e1b11ec5c88e5bc"
        `);
        await queryRunner.query(`
            DROP INDEX "IDX_db5c470fda756c38c8d9ad29e9"
        `);
        await queryRunner.query(`
            DROP TABLE "providers"
        `);
        await queryRunner.query(`
            DROP INDEX "IDX_bf84df89887286060b7e708fc3"
        `);
        await queryRunner.query(`
            DROP INDEX "IDX_9a7261433f5876020c6bbfe534"
        `);
        await queryRunner.query(`
            DROP TABLE "integration_workspaces"
        `);
        await queryRunner.query(`
            DROP INDEX "IDX_38da266778b97b46a5ec21a057"
        `);
        await queryRunner.query(`
            DROP TABLE "integrations"
        `);
        await queryRunner.query(`
            DROP INDEX "IDX_2e920887855404bae1df68887d"
        `);
        await queryRunner.query(`
            DROP TABLE "integration_models"
        `);
    }

}
