#!/usr/bin/env bash
# Generates one migration per dialect from the difference between the entities and the schema
# that the committed migrations build. Usage: scripts/generate-migration.sh <PascalCaseName>
# MIGRATION_SKIP_LIBS=a,b leaves other libs' unfinished entities out (see ormconfig.ts).
# Needs a PostgreSQL server: PG_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres).
set -euo pipefail
# One generation at a time on this machine: each rewrites the migration index files.
exec 9> /tmp/switchboard-generate-migration.lock
flock 9
name=${1:?usage: scripts/generate-migration.sh <PascalCaseName>}
cd "$(dirname "$0")/.."
cli=(node -r ts-node/register/transpile-only -r tsconfig-paths/register node_modules/typeorm/cli.js)
export TS_NODE_PROJECT=tsconfig.json

write_index() {
  local dir=$1 exportName=$2
  {
    echo "// Maintained by scripts/generate-migration.sh: every migration of this dialect, in order."
    for file in $(ls "$dir" | grep -E '^[0-9]+-.*\.ts$' | sort); do
      local class
      class=$(grep -oE 'export class [A-Za-z0-9_]+' "$dir/$file" | awk '{print $3}')
      echo "import { $class } from './${file%.ts}';"
    done
    echo ""
    echo "export const $exportName: Function[] = ["
    for file in $(ls "$dir" | grep -E '^[0-9]+-.*\.ts$' | sort); do
      echo "  $(grep -oE 'export class [A-Za-z0-9_]+' "$dir/$file" | awk '{print $3}'),"
    done
    echo "];"
  } > "$dir/index.ts"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# SQLite: a fresh file brought up to date, then the difference.
export DATABASE_URL="sqlite:$tmp/gen.db"
"${cli[@]}" migration:run -d ormconfig.ts > /dev/null
"${cli[@]}" migration:generate "libs/database/src/migrations/sqlite/$name" -d ormconfig.ts --pretty || true
write_index libs/database/src/migrations/sqlite sqliteMigrations

# PostgreSQL: a scratch database, dropped afterwards.
admin=${PG_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/postgres}
db="switchboard_gen_$$"
psql "$admin" -qc "CREATE DATABASE $db" > /dev/null
trap 'psql "$admin" -qc "DROP DATABASE IF EXISTS $db" > /dev/null; rm -rf "$tmp"' EXIT
export DATABASE_URL="${admin%/*}/$db"
"${cli[@]}" migration:run -d ormconfig.ts > /dev/null
"${cli[@]}" migration:generate "libs/database/src/migrations/postgres/$name" -d ormconfig.ts --pretty || true
write_index libs/database/src/migrations/postgres postgresMigrations
npx prettier --write libs/database/src/migrations > /dev/null
echo "Generated $name for sqlite and postgres (check both folders)."
