import { MigrationInterface, QueryRunner } from "typeorm";

export class Policies1795264004498 implements MigrationInterface {
    name = 'Policies1795264004498'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            CREATE TABLE "usage_limit_counters" (
                "id" uuid NOT NULL,
                "organisation_id" uuid NOT NULL,
                "workspace_id" uuid,
                "policy_key" character varying(200) NOT NULL,
                "policy_id" uuid,
                "value_key" character varying(600) NOT NULL,
                "group_values" jsonb NOT NULL,
                "type" character varying(16) NOT NULL,
                "current_usage" numeric(24, 10) NOT NULL DEFAULT '0',
                "status" character varying(16) NOT NULL DEFAULT 'active',
                "epoch" integer NOT NULL DEFAULT '0',
                "threshold_alert_sent" boolean NOT NULL DEFAULT false,
                "exhausted_alert_sent" boolean NOT NULL DEFAULT false,
                "credit_limit" numeric(24, 10),
                "alert_threshold" numeric(24, 10),
                "reset_rule" character varying(16),
                "next_reset_at" TIMESTAMP WITH TIME ZONE,
                "last_reset_at" TIMESTAMP WITH TIME ZONE,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_5fde27baffc719515856d1c4912" PRIMARY KEY ("id")
            )
        `);
        await queryRunner.query(`
            CREATE INDEX "IDX_aeaaf102d3f1b8172d5fc74be7" ON "usage_limit_counters" ("next_reset_at")
        `);
        await queryRunner.query(`
            CREATE UNIQUE INDEX "IDX_269f45c25d8fce823d9326f12e" ON "usage_limit_counters" ("policy_key", "value_key")
        `);
        await queryRunner.query(`
            CREATE TABLE "rate_limit_policies" (
                "id" uuid NOT NULL,
                "organisation_id" uuid NOT NULL,
                "workspace_id" uuid,
                "name" character varying(255),
                "conditions" jsonb NOT NULL,
                "group_by" jsonb NOT NULL,
                "type" character varying(16) NOT NULL,
                "unit" character varying(8) NOT NULL,
                "value" numeric(24, 6) NOT NULL,
                "status" character varying(16) NOT NULL DEFAULT 'active',
                "created_by_user_id" uuid,
                "created_by_key_id" uuid,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_e2c7f4c888fed86eb2306820276" PRIMARY KEY ("id")
            )
        `);
        await queryRunner.query(`
            CREATE INDEX "IDX_f42a55f548322fd024607deac0" ON "rate_limit_policies" ("organisation_id", "workspace_id", "status")
        `);
        await queryRunner.query(`
            CREATE TABLE "usage_limit_policies" (
                "id" uuid NOT NULL,
                "organisation_id" uuid NOT NULL,
                "workspace_id" uuid,
                "name" character varying(255),
                "conditions" jsonb NOT NULL,
                "group_by" jsonb NOT NULL,
                "type" character varying(16) NOT NULL,
                "credit_limit" numeric(24, 10) NOT NULL,
                "alert_threshold" numeric(24, 10),
                "periodic_reset" character varying(16),
                "periodic_reset_days" integer,
                "next_usage_reset_at" TIMESTAMP WITH TIME ZONE,
                "last_reset_at" TIMESTAMP WITH TIME ZONE,
                "status" character varying(16) NOT NULL DEFAULT 'active',
                "created_by_user_id" uuid,
                "created_by_key_id" uuid,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_bfe0bbee2078a644d6a7e16d098" PRIMARY KEY ("id")
            )
        `);
        await queryRunner.query(`
            CREATE INDEX "IDX_1c5b59af141d43acc5d74f64e6" ON "usage_limit_policies" ("status", "next_usage_reset_at")
        `);
        await queryRunner.query(`
            CREATE INDEX "IDX_d18be04dc965d6babda250a7d1" ON "usage_limit_policies" ("organisation_id", "workspace_id", "status")
        `);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            DROP INDEX "public"."IDX_d18be04dc965d6babda250a7d1"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."IDX_1c5b59af141d43acc5d74f64e6"
        `);
        await queryRunner.query(`
            DROP TABLE "usage_limit_policies"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."IDX_f42a55f548322fd024607deac0"
        `);
        await queryRunner.query(`
            DROP TABLE "rate_limit_policies"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."IDX_269f45c25d8fce823d9326f12e"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."IDX_aeaaf102d3f1b8172d5fc74be7"
        `);
        await queryRunner.query(`
            DROP TABLE "usage_limit_counters"
        `);
    }

}
