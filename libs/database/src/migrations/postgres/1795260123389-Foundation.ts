import { MigrationInterface, QueryRunner } from 'typeorm';

export class Foundation1795260123389 implements MigrationInterface {
  name = 'Foundation1795260123389';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "api_keys" (
                "id" uuid NOT NULL,
                "organisation_id" uuid NOT NULL,
                "workspace_id" uuid,
                "user_id" uuid,
                "type" character varying(32) NOT NULL,
                "name" character varying(255) NOT NULL,
                "description" text,
                "key_hash" character varying(64) NOT NULL,
                "key_mask" character varying(32) NOT NULL,
                "previous_key_hash" character varying(64),
                "previous_key_expires_at" TIMESTAMP WITH TIME ZONE,
                "status" character varying(16) NOT NULL DEFAULT 'active',
                "scopes" jsonb NOT NULL DEFAULT '[]',
                "defaults" jsonb,
                "rate_limits" jsonb,
                "usage_limits" jsonb,
                "alert_emails" jsonb,
                "expires_at" TIMESTAMP WITH TIME ZONE,
                "creation_mode" character varying(8) NOT NULL DEFAULT 'api',
                "created_by_user_id" uuid,
                "created_by_key_id" uuid,
                "last_rotated_at" TIMESTAMP WITH TIME ZONE,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "UQ_57384430aa1959f4578046c9b81" UNIQUE ("key_hash"),
                CONSTRAINT "UQ_3a5d4e164cbc2303c3cd59cce0e" UNIQUE ("previous_key_hash"),
                CONSTRAINT "PK_5c8a79801b44bd27b79228e1dad" PRIMARY KEY ("id")
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
                "id" uuid NOT NULL,
                "organisation_id" uuid,
                "workspace_id" uuid,
                "actor_type" character varying(16) NOT NULL,
                "user_id" uuid,
                "api_key_id" uuid,
                "action" character varying(64) NOT NULL,
                "resource_type" character varying(64) NOT NULL,
                "resource_id" character varying(255),
                "method" character varying(8) NOT NULL,
                "uri" character varying(2048) NOT NULL,
                "response_status_code" integer NOT NULL,
                "client_ip" character varying(64),
                "user_agent" character varying(512),
                "request_id" character varying(128) NOT NULL,
                "trace_id" character varying(128),
                "error_code" character varying(64),
                "request_body" jsonb,
                "query_params" jsonb,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                CONSTRAINT "PK_1bb179d048bbc581caa3b013439" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_f03e42c2a17da91961d1722e6c" ON "audit_logs" ("organisation_id", "created_at")
        `);
    await queryRunner.query(`
            CREATE TABLE "invites" (
                "id" uuid NOT NULL,
                "organisation_id" uuid NOT NULL,
                "email" character varying(320) NOT NULL,
                "role" character varying(16) NOT NULL,
                "workspaces" jsonb NOT NULL DEFAULT '[]',
                "workspace_api_key_details" jsonb,
                "token_hash" character varying(64) NOT NULL,
                "status" character varying(16) NOT NULL DEFAULT 'pending',
                "invited_by" uuid,
                "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "accepted_at" TIMESTAMP WITH TIME ZONE,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "UQ_0843131f4ae91435709527a4f18" UNIQUE ("token_hash"),
                CONSTRAINT "PK_aa52e96b44a714372f4dd31a0af" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_ba7dc7dfe1c7216cc2443804e3" ON "invites" ("organisation_id", "email")
        `);
    await queryRunner.query(`
            CREATE TABLE "organisations" (
                "id" uuid NOT NULL,
                "name" character varying(255) NOT NULL,
                "slug" character varying(255) NOT NULL,
                "settings" jsonb NOT NULL DEFAULT '{}',
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "UQ_db67ac918db3917134d0c9edbb3" UNIQUE ("slug"),
                CONSTRAINT "PK_7bf54cba378d5b2f1d4c10ef4df" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE TABLE "users" (
                "id" uuid NOT NULL,
                "organisation_id" uuid NOT NULL,
                "email" character varying(320) NOT NULL,
                "first_name" character varying(255),
                "last_name" character varying(255),
                "role" character varying(16) NOT NULL,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_a3ffb1c0c8416b9fc6f907b7433" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "IDX_cf023cf528d8107c1d33fc258d" ON "users" ("organisation_id", "email")
        `);
    await queryRunner.query(`
            CREATE TABLE "workspace_members" (
                "id" uuid NOT NULL,
                "organisation_id" uuid NOT NULL,
                "workspace_id" uuid NOT NULL,
                "user_id" uuid NOT NULL,
                "role" character varying(16) NOT NULL,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_22ab43ac5865cd62769121d2bc4" PRIMARY KEY ("id")
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
                "id" uuid NOT NULL,
                "organisation_id" uuid NOT NULL,
                "name" character varying(255) NOT NULL,
                "slug" character varying(255) NOT NULL,
                "description" text,
                "status" character varying(16) NOT NULL DEFAULT 'active',
                "is_default" boolean NOT NULL DEFAULT false,
                "defaults" jsonb,
                "usage_limits" jsonb NOT NULL DEFAULT '[]',
                "rate_limits" jsonb NOT NULL DEFAULT '[]',
                "settings" jsonb NOT NULL DEFAULT '{}',
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_098656ae401f3e1a4586f47fd8e" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "IDX_327b0a64eb0ec973141c99771b" ON "workspaces" ("organisation_id", "slug")
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP INDEX "public"."IDX_327b0a64eb0ec973141c99771b"
        `);
    await queryRunner.query(`
            DROP TABLE "workspaces"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_4896b609c71ca5ad20ad662077"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_4e83431119fa585fc7aa8b817d"
        `);
    await queryRunner.query(`
            DROP TABLE "workspace_members"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_cf023cf528d8107c1d33fc258d"
        `);
    await queryRunner.query(`
            DROP TABLE "users"
        `);
    await queryRunner.query(`
            DROP TABLE "organisations"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_ba7dc7dfe1c7216cc2443804e3"
        `);
    await queryRunner.query(`
            DROP TABLE "invites"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_f03e42c2a17da91961d1722e6c"
        `);
    await queryRunner.query(`
            DROP TABLE "audit_logs"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_d882d754a98eb7e291bbeb12d6"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_ea16e601d61fe3071fedf67cd6"
        `);
    await queryRunner.query(`
            DROP TABLE "api_keys"
        `);
  }
}
