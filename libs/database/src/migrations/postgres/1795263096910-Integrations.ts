import { MigrationInterface, QueryRunner } from "typeorm";

export class Integrations1795263096910 implements MigrationInterface {
    name = 'Integrations1795263096910'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            CREATE TABLE "integration_models" (
                "id" uuid NOT NULL,
                "organisation_id" uuid NOT NULL,
                "integration_id" uuid NOT NULL,
                "slug" character varying(255) NOT NULL,
                "enabled" boolean NOT NULL DEFAULT true,
                "is_custom" boolean NOT NULL DEFAULT false,
                "is_finetune" boolean NOT NULL DEFAULT false,
                "base_model_slug" character varying(255),
                "configurations" jsonb,
                "pricing_config" jsonb,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_012bb56a92fdcef86f9e2555605" PRIMARY KEY ("id")
            )
        `);
        await queryRunner.query(`
            CREATE UNIQUE INDEX "IDX_2e920887855404bae1df68887d" ON "integration_models" ("integration_id", "slug")
        `);
        await queryRunner.query(`
            CREATE TABLE "integration_workspaces" (
                "id" uuid NOT NULL,
                "organisation_id" uuid NOT NULL,
                "integration_id" uuid NOT NULL,
                "workspace_id" uuid NOT NULL,
                "enabled" boolean NOT NULL DEFAULT true,
                "usage_limits" jsonb,
                "rate_limits" jsonb,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_b1591ad29aa71ef0fb170f5cf81" PRIMARY KEY ("id")
            )
        `);
        await queryRunner.query(`
            CREATE INDEX "IDX_9a7261433f5876020c6bbfe534" ON "integration_workspaces" ("workspace_id")
        `);
        await queryRunner.query(`
            CREATE UNIQUE INDEX "IDX_bf84df89887286060b7e708fc3" ON "integration_workspaces" ("integration_id", "workspace_id")
        `);
        await queryRunner.query(`
            CREATE TABLE "integrations" (
                "id" uuid NOT NULL,
                "organisation_id" uuid NOT NULL,
                "workspace_id" uuid,
                "slug" character varying(255) NOT NULL,
                "name" character varying(255) NOT NULL,
                "description" text,
                "ai_provider_id" character varying(64) NOT NULL,
                "status" character varying(16) NOT NULL DEFAULT 'active',
                "key_encrypted" text,
                "key_mask" character varying(64),
                "configurations" jsonb NOT NULL DEFAULT '{}',
                "secret_configurations" text,
                "secret_mappings" jsonb NOT NULL DEFAULT '[]',
                "pricing_adjustments" jsonb,
                "tags" jsonb NOT NULL DEFAULT '{}',
                "allow_all_models" boolean NOT NULL DEFAULT true,
                "global_workspace_access" jsonb,
                "created_by_user_id" uuid,
                "created_by_key_id" uuid,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_9adcdc6d6f3922535361ce641e8" PRIMARY KEY ("id")
            )
        `);
        await queryRunner.query(`
            CREATE UNIQUE INDEX "IDX_38da266778b97b46a5ec21a057" ON "integrations" ("organisation_id", "slug")
        `);
        await queryRunner.query(`
            CREATE TABLE "providers" (
                "id" uuid NOT NULL,
                "organisation_id" uuid NOT NULL,
                "workspace_id" uuid NOT NULL,
                "integration_id" uuid,
                "kind" character varying(16) NOT NULL DEFAULT 'provider',
                "slug" character varying(255) NOT NULL,
                "name" character varying(255) NOT NULL,
                "note" text,
                "ai_provider_id" character varying(64) NOT NULL,
                "key_encrypted" text,
                "key_mask" character varying(64),
                "configurations" jsonb NOT NULL DEFAULT '{}',
                "secret_configurations" text,
                "secret_mappings" jsonb NOT NULL DEFAULT '[]',
                "tags" jsonb NOT NULL DEFAULT '{}',
                "usage_limits" jsonb,
                "rate_limits" jsonb,
                "expires_at" TIMESTAMP WITH TIME ZONE,
                "status" character varying(16) NOT NULL DEFAULT 'active',
                "is_default" boolean NOT NULL DEFAULT false,
                "created_by_user_id" uuid,
                "created_by_key_id" uuid,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_af13fc2ebf382fe0dad2e4793aa" PRIMARY KEY ("id")
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
                "id" uuid NOT NULL,
                "organisation_id" uuid NOT NULL,
                "slug" character varying(255) NOT NULL,
                "name" character varying(255) NOT NULL,
                "description" character varying(1024),
                "manager_type" character varying(32) NOT NULL,
                "auth_config_encrypted" text NOT NULL,
                "secret_path" character varying(1024) NOT NULL,
                "secret_key" character varying(255),
                "allow_all_workspaces" boolean NOT NULL DEFAULT true,
                "allowed_workspaces" jsonb NOT NULL DEFAULT '[]',
                "tags" jsonb,
                "status" character varying(16) NOT NULL DEFAULT 'active',
                "created_by_user_id" uuid,
                "created_by_key_id" uuid,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_2364f39cf3712905a6ded59177c" PRIMARY KEY ("id")
            )
        `);
        await queryRunner.query(`
            CREATE UNIQUE INDEX "IDX_eec1ba9982a268fe0652b79720" ON "secret_references" ("organisation_id", "slug")
        `);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            DROP INDEX "public"."IDX_eec1ba9982a268fe0652b79720"
        `);
        await queryRunner.query(`
            DROP TABLE "secret_references"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."IDX_b2a31523e0a5387a8e8c3757d9"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."IDX_25446a73938e1b11ec5c88e5bc"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."IDX_db5c470fda756c38c8d9ad29e9"
        `);
        await queryRunner.query(`
            DROP TABLE "providers"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."IDX_38da266778b97b46a5ec21a057"
        `);
        await queryRunner.query(`
            DROP TABLE "integrations"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."IDX_bf84df89887286060b7e708fc3"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."IDX_9a7261433f5876020c6bbfe534"
        `);
        await queryRunner.query(`
            DROP TABLE "integration_workspaces"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."IDX_2e920887855404bae1df68887d"
        `);
        await queryRunner.query(`
            DROP TABLE "integration_models"
        `);
    }

}
