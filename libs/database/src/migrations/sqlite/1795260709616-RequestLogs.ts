import { MigrationInterface, QueryRunner } from "typeorm";

export class RequestLogs1795260709616 implements MigrationInterface {
    name = 'RequestLogs1795260709616'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            CREATE TABLE "request_log_rollups" (
                "id" varchar(64) PRIMARY KEY NOT NULL,
                "bucket_start" datetime NOT NULL,
                "granularity" varchar(8) NOT NULL,
                "organisation_id" varchar(36) NOT NULL,
                "workspace_id" varchar(36),
                "api_key_id" varchar(36),
                "provider" varchar(64),
                "model" varchar(255),
                "config_id" varchar(255),
                "prompt_id" varchar(255),
                "status_code" integer NOT NULL,
                "cache_status" varchar(16) NOT NULL,
                "request_count" integer NOT NULL,
                "error_count" integer NOT NULL,
                "cache_hit_count" integer NOT NULL,
                "prompt_tokens" bigint NOT NULL,
                "completion_tokens" bigint NOT NULL,
                "total_tokens" bigint NOT NULL,
                "cached_tokens" bigint NOT NULL,
                "reasoning_tokens" bigint NOT NULL,
                "cost" decimal(24, 10) NOT NULL,
                "latency_sum_ms" bigint NOT NULL,
                "ttfb_count" integer NOT NULL,
                "ttfb_sum_ms" bigint NOT NULL,
                "latency_le_10" integer NOT NULL,
                "latency_le_25" integer NOT NULL,
                "latency_le_50" integer NOT NULL,
                "latency_le_100" integer NOT NULL,
                "latency_le_250" integer NOT NULL,
                "latency_le_500" integer NOT NULL,
                "latency_le_1000" integer NOT NULL,
                "latency_le_2500" integer NOT NULL,
                "latency_le_5000" integer NOT NULL,
                "latency_le_10000" integer NOT NULL,
                "latency_le_30000" integer NOT NULL,
                "latency_le_60000" integer NOT NULL,
                "latency_gt_60000" integer NOT NULL
            )
        `);
        await queryRunner.query(`
            CREATE INDEX "IDX_30313fa9a1ab96346897d79e24" ON "request_log_rollups" ("workspace_id", "granularity", "bucket_start")
        `);
        await queryRunner.query(`
            CREATE INDEX "IDX_96f6c4d8a6d3953a48b70aec53" ON "request_log_rollups" ("organisation_id", "granularity", "bucket_start")
        `);
        await queryRunner.query(`
            CREATE TABLE "request_logs" (
                "id" varchar(36) PRIMARY KEY NOT NULL,
                "request_id" varchar(128) NOT NULL,
                "trace_id" varchar(128) NOT NULL,
                "span_id" varchar(128),
                "parent_span_id" varchar(128),
                "span_name" varchar(255),
                "organisation_id" varchar(36) NOT NULL,
                "workspace_id" varchar(36),
                "api_key_id" varchar(36),
                "user_id" varchar(36),
                "provider" varchar(64),
                "provider_slug" varchar(255),
                "model" varchar(255),
                "config_id" varchar(255),
                "prompt_id" varchar(255),
                "route" varchar(64) NOT NULL,
                "method" varchar(16) NOT NULL,
                "path" varchar(2048) NOT NULL,
                "status" integer NOT NULL,
                "is_stream" boolean NOT NULL,
                "latency_ms" integer NOT NULL,
                "ttfb_ms" integer,
                "prompt_tokens" integer NOT NULL,
                "completion_tokens" integer NOT NULL,
                "total_tokens" integer NOT NULL,
                "cached_tokens" integer NOT NULL,
                "reasoning_tokens" integer NOT NULL,
                "cost" decimal(20, 10),
                "cache_status" varchar(16) NOT NULL,
                "retry_count" integer NOT NULL,
                "metadata" text,
                "request_body" text,
                "response_body" text,
                "error_code" varchar(64),
                "error_message" text,
                "created_at" datetime NOT NULL
            )
        `);
        await queryRunner.query(`
            CREATE INDEX "IDX_6871d86a1d7c05302af4221927" ON "request_logs" ("trace_id")
        `);
        await queryRunner.query(`
            CREATE INDEX "IDX_9706ea6f459cac91f3b0132d3c" ON "request_logs" ("workspace_id", "created_at")
        `);
        await queryRunner.query(`
            CREATE INDEX "IDX_2c5851cfeeefdf4d3da59cdf36" ON "request_logs" ("organisation_id", "created_at")
        `);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            DROP INDEX "IDX_2c5851cfeeefdf4d3da59cdf36"
        `);
        await queryRunner.query(`
            DROP INDEX "IDX_9706ea6f459cac91f3b0132d3c"
        `);
        await queryRunner.query(`
            DROP INDEX "IDX_6871d86a1d7c05302af4221927"
        `);
        await queryRunner.query(`
            DROP TABLE "request_logs"
        `);
        await queryRunner.query(`
            DROP INDEX "IDX_96f6c4d8a6d3953a48b70aec53"
        `);
        await queryRunner.query(`
            DROP INDEX "IDX_30313fa9a1ab96346897d79e24"
        `);
        await queryRunner.query(`
            DROP TABLE "request_log_rollups"
        `);
    }

}
