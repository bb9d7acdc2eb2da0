import { MigrationInterface, QueryRunner } from "typeorm";

export class RequestLogs1795260712107 implements MigrationInterface {
    name = 'RequestLogs1795260712107'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            CREATE TABLE "request_log_rollups" (
                "id" character varying(64) NOT NULL,
                "bucket_start" TIMESTAMP WITH TIME ZONE NOT NULL,
                "granularity" character varying(8) NOT NULL,
                "organisation_id" uuid NOT NULL,
                "workspace_id" uuid,
                "api_key_id" uuid,
                "provider" character varying(64),
                "model" character varying(255),
                "config_id" character varying(255),
                "prompt_id" character varying(255),
                "status_code" integer NOT NULL,
                "cache_status" character varying(16) NOT NULL,
                "request_count" integer NOT NULL,
                "error_count" integer NOT NULL,
                "cache_hit_count" integer NOT NULL,
                "prompt_tokens" bigint NOT NULL,
                "completion_tokens" bigint NOT NULL,
                "total_tokens" bigint NOT NULL,
                "cached_tokens" bigint NOT NULL,
                "reasoning_tokens" bigint NOT NULL,
                "cost" numeric(24, 10) NOT NULL,
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
                "latency_gt_60000" integer NOT NULL,
                CONSTRAINT "PK_a335baf6b1288bed1b31d2e8dc5" PRIMARY KEY ("id")
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
                "id" uuid NOT NULL,
                "request_id" character varying(128) NOT NULL,
                "trace_id" character varying(128) NOT NULL,
                "span_id" character varying(128),
                "parent_span_id" character varying(128),
                "span_name" character varying(255),
                "organisation_id" uuid NOT NULL,
                "workspace_id" uuid,
                "api_key_id" uuid,
                "user_id" uuid,
                "provider" character varying(64),
                "provider_slug" character varying(255),
                "model" character varying(255),
                "config_id" character varying(255),
                "prompt_id" character varying(255),
                "route" character varying(64) NOT NULL,
                "method" character varying(16) NOT NULL,
                "path" character varying(2048) NOT NULL,
                "status" integer NOT NULL,
                "is_stream" boolean NOT NULL,
                "latency_ms" integer NOT NULL,
                "ttfb_ms" integer,
                "prompt_tokens" integer NOT NULL,
                "completion_tokens" integer NOT NULL,
                "total_tokens" integer NOT NULL,
                "cached_tokens" integer NOT NULL,
                "reasoning_tokens" integer NOT NULL,
                "cost" numeric(20, 10),
                "cache_status" character varying(16) NOT NULL,
                "retry_count" integer NOT NULL,
                "metadata" jsonb,
                "request_body" text,
                "response_body" text,
                "error_code" character varying(64),
                "error_message" text,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                CONSTRAINT "PK_1edd3815ae37a9b9511f5a26dca" PRIMARY KEY ("id")
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
            DROP INDEX "public"."IDX_2c5851cfeeefdf4d3da59cdf36"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."IDX_9706ea6f459cac91f3b0132d3c"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."IDX_6871d86a1d7c05302af4221927"
        `);
        await queryRunner.query(`
            DROP TABLE "request_logs"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."IDX_96f6c4d8a6d3953a48b70aec53"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."IDX_30313fa9a1ab96346897d79e24"
        `);
        await queryRunner.query(`
            DROP TABLE "request_log_rollups"
        `);
    }

}
