import { MigrationInterface, QueryRunner } from "typeorm";

export class Configs1795262966312 implements MigrationInterface {
    name = 'Configs1795262966312'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            CREATE TABLE "configs" (
                "id" uuid NOT NULL,
                "organisation_id" uuid NOT NULL,
                "workspace_id" uuid NOT NULL,
                "name" character varying(255) NOT NULL,
                "slug" character varying(255) NOT NULL,
                "config" jsonb NOT NULL,
                "is_default" boolean NOT NULL DEFAULT false,
                "status" character varying(16) NOT NULL DEFAULT 'active',
                "version_id" uuid NOT NULL,
                "version" integer NOT NULL DEFAULT '1',
                "owner_id" uuid,
                "updated_by" uuid,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_002b633ec0d45f5c6f928fea292" PRIMARY KEY ("id")
            )
        `);
        await queryRunner.query(`
            CREATE UNIQUE INDEX "IDX_configs_one_default_per_workspace" ON "configs" ("workspace_id")
            WHERE "is_default" = true
        `);
        await queryRunner.query(`
            CREATE INDEX "IDX_548c99a1d8fb4e56bfd8a549ef" ON "configs" ("workspace_id")
        `);
        await queryRunner.query(`
            CREATE UNIQUE INDEX "IDX_a35865a8f00b85759c5659b89b" ON "configs" ("organisation_id", "slug")
        `);
        await queryRunner.query(`
            CREATE TABLE "config_versions" (
                "id" uuid NOT NULL,
                "config_id" uuid NOT NULL,
                "organisation_id" uuid NOT NULL,
                "workspace_id" uuid NOT NULL,
                "version" integer NOT NULL,
                "name" character varying(255) NOT NULL,
                "config" jsonb NOT NULL,
                "is_default" boolean NOT NULL DEFAULT false,
                "status" character varying(16) NOT NULL,
                "created_by" uuid,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_bfe5d82a380b937e42bbb72109b" PRIMARY KEY ("id")
            )
        `);
        await queryRunner.query(`
            CREATE UNIQUE INDEX "IDX_c6d7cc29ef4c327020b03b0ba1" ON "config_versions" ("config_id", "version")
        `);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            DROP INDEX "public"."IDX_c6d7cc29ef4c327020b03b0ba1"
        `);
        await queryRunner.query(`
            DROP TABLE "config_versions"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."IDX_a35865a8f00b85759c5659b89b"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."IDX_548c99a1d8fb4e56bfd8a549ef"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."IDX_configs_one_default_per_workspace"
        `);
        await queryRunner.query(`
            DROP TABLE "configs"
        `);
    }

}
