import { MigrationInterface, QueryRunner } from "typeorm";

export class Policies1795264000689 implements MigrationInterface {
    name = 'Policies1795264000689'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            CREATE TABLE "rate_limit_policies" (
                "id" varchar(36) PRIMARY KEY NOT NULL,
                "organisation_id" varchar(36) NOT NULL,
                "workspace_id" varchar(36),
                "name" varchar(255),
                "conditions" text NOT NULL,
                "group_by" text NOT NULL,
                "type" varchar(16) NOT NULL,
                "unit" varchar(8) NOT NULL,
                "value" decimal(24, 6) NOT NULL,
                "status" varchar(16) NOT NULL DEFAULT ('active'),
                "created_by_user_id" varchar(36),
                "created_by_key_id" varchar(36),
                "created_at" datetime NOT NULL DEFAULT (datetime('now')),
                "updated_at" datetime NOT NULL DEFAULT (datetime('now'))
            )
        `);
        await queryRunner.query(`
            CREATE INDEX "IDX_f42a55f548322fd024607deac0" ON "rate_limit_policies" ("organisation_id", "workspace_id", "status")
        `);
        await queryRunner.query(`
            CREATE TABLE "usage_limit_counters" (
                "id" varchar(36) PRIMARY KEY NOT NULL,
                "organisation_id" varchar(36) NOT NULL,
                "workspace_id" varchar(36),
                "policy_key" varchar(200) NOT NULL,
                "policy_id" varchar(36),
                "value_key" varchar(600) NOT NULL,
                "group_values" text NOT NULL,
                "type" varchar(16) NOT NULL,
                "current_usage" decimal(24, 10) NOT NULL DEFAULT (0),
                "status" varchar(16) NOT NULL DEFAULT ('active'),
                "epoch" integer NOT NULL DEFAULT (0),
                "threshold_alert_sent" boolean NOT NULL DEFAULT (0),
                "exhausted_alert_sent" boolean NOT NULL DEFAULT (0),
                "credit_limit" decimal(24, 10),
                "alert_threshold" decimal(24, 10),
                "reset_rule" varchar(16),
                "next_reset_at" datetime,
                "last_reset_at" datetime,
                "created_at" datetime NOT NULL DEFAULT (datetime('now')),
                "updated_at" datetime NOT NULL DEFAULT (datetime('now'))
            )
        `);
        await queryRunner.query(`
            CREATE INDEX "IDX_aeaaf102d3f1b8172d5fc74be7" ON "usage_limit_counters" ("next_reset_at")
        `);
        await queryRunner.query(`
            CREATE UNIQUE INDEX "IDX_269f45c25d8fce823d9326f12e" ON "usage_limit_counters" ("policy_key", "value_key")
        `);
        await queryRunner.query(`
            CREATE TABLE "usage_limit_policies" (
                "id" varchar(36) PRIMARY KEY NOT NULL,
                "organisation_id" varchar(36) NOT NULL,
                "workspace_id" varchar(36),
                "name" varchar(255),
                "conditions" text NOT NULL,
                "group_by" text NOT NULL,
                "type" varchar(16) NOT NULL,
                "credit_limit" decimal(24, 10) NOT NULL,
                "alert_threshold" decimal(24, 10),
                "periodic_reset" varchar(16),
                "periodic_reset_days" integer,
                "next_usage_reset_at" datetime,
                "last_reset_at" datetime,
                "status" varchar(16) NOT NULL DEFAULT ('active'),
                "created_by_user_id" varchar(36),
                "created_by_key_id" varchar(36),
                "created_at" datetime NOT NULL DEFAULT (datetime('now')),
                "updated_at" datetime NOT NULL DEFAULT (datetime('now'))
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
            DROP INDEX "IDX_d18be04dc965d6babda250a7d1"
        `);
        await queryRunner.query(`
            DROP INDEX "IDX_1c5b59af141d43acc5d74f64e6"
        `);
        await queryRunner.query(`
            DROP TABLE "usage_limit_policies"
        `);
        await queryRunner.query(`
            DROP INDEX "IDX_269f45c25d8fce823d9326f12e"
        `);
        await queryRunner.query(`
            DROP INDEX "IDX_aeaaf102d3f1b8172d5fc74be7"
        `);
        await queryRunner.query(`
            DROP TABLE "usage_limit_counters"
        `);
        await queryRunner.query(`
            DROP INDEX "IDX_f42a55f548322fd024607deac0"
        `);
        await queryRunner.query(`
            DROP TABLE "rate_limit_policies"
        `);
    }

}
