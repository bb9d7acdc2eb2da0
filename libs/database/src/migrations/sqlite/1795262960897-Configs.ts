import { MigrationInterface, QueryRunner } from "typeorm";

export class Configs1795262960897 implements MigrationInterface {
    name = 'Configs1795262960897'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            CREATE TABLE "config_versions" (
                "id" varchar(36) PRIMARY KEY NOT NULL,
                "config_id" varchar(36) NOT NULL,
                "organisation_id" varchar(36) NOT NULL,
                "workspace_id" varchar(36) NOT NULL,
                "version" integer NOT NULL,
                "name" varchar(255) NOT NULL,
                "config" text NOT NULL,
                "is_default" boolean NOT NULL DEFAULT (0),
                "status" varchar(16) NOT NULL,
                "created_by" varchar(36),
                "created_at" datetime NOT NULL DEFAULT (datetime('now'))
            )
        `);
        await queryRunner.query(`
            CREATE UNIQUE INDEX "IDX_c6d7cc29ef4c327020b03b0ba1" ON "config_versions" ("config_id", "version")
        `);
        await queryRunner.query(`
            CREATE TABLE "configs" (
                "id" varchar(36) PRIMARY KEY NOT NULL,
                "organisation_id" varchar(36) NOT NULL,
                "workspace_id" varchar(36) NOT NULL,
                "name" varchar(255) NOT NULL,
                "slug" varchar(255) NOT NULL,
                "config" text NOT NULL,
                "is_default" boolean NOT NULL DEFAULT (0),
                "status" varchar(16) NOT NULL DEFAULT ('active'),
                "version_id" varchar(36) NOT NULL,
                "version" integer NOT NULL DEFAULT (1),
                "owner_id" varchar(36),
                "updated_by" varchar(36),
                "created_at" datetime NOT NULL DEFAULT (datetime('now')),
                "updated_at" datetime NOT NULL DEFAULT (datetime('now'))
            )
        `);
        await queryRunner.query(`
            CREATE UNIQUE INDEX "IDX_configs_one_default_per_workspace" ON "configs" ("workspace_id")
            WHERE "is_default" = 1
        `);
        await queryRunner.query(`
            CREATE INDEX "IDX_548c99a1d8fb4e56bfd8a549ef" ON "configs" ("workspace_id")
        `);
        await queryRunner.query(`
            CREATE UNIQUE INDEX "IDX_a35865a8f00b85759c5659b89b" ON "configs" ("organisation_id", "slug")
        `);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            DROP INDEX "IDX_a35865a8f00b85759c5659b89b"
        `);
        await queryRunner.query(`
            DROP INDEX "IDX_548c99a1d8fb4e56bfd8a549ef"
        `);
        await queryRunner.query(`
            DROP INDEX "IDX_configs_one_default_per_workspace"
        `);
        await queryRunner.query(`
            DROP TABLE "configs"
        `);
        await queryRunner.query(`
            DROP INDEX "IDX_c6d7cc29ef4c327020b03b0ba1"
        `);
        await queryRunner.query(`
            DROP TABLE "config_versions"
        `);
    }

}
