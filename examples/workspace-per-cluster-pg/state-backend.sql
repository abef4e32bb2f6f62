-- The state of one workspace of examples/workspace-per-cluster-pg in a
-- PostgreSQL database (10 or newer) for Terraform's pg backend: a role named
-- after the workspace, which writes the workspace's own schema and reads
-- every other workspace's, and nothing more. Run it once per workspace, as
-- the database's owner or a superuser:
--
--   psql "$ADMIN_URL" -v ON_ERROR_STOP=1 -v workspace=ws-a -v password="$PW" -f state-backend.sql
--
-- The schema, table and index are those the pg backend would create itself
-- (its states table, states_by_name index, and the id sequence it shares in
-- public); the workspaces' roles may create nothing, so their backends and
-- terraform_remote_state skip that creation.

SET client_min_messages = warning;
SELECT NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'zerotrust_workspaces') AS create_group \gset
\if :create_group
CREATE ROLE zerotrust_workspaces NOLOGIN;
\endif
CREATE SEQUENCE IF NOT EXISTS public.global_states_id_seq AS bigint;
GRANT USAGE ON SEQUENCE public.global_states_id_seq TO zerotrust_workspaces;

CREATE ROLE :"workspace" LOGIN PASSWORD :'password' IN ROLE zerotrust_workspaces;
CREATE SCHEMA :"workspace";
CREATE TABLE :"workspace".states (
  id bigint NOT NULL DEFAULT nextval('public.global_states_id_seq') PRIMARY KEY,
  name text UNIQUE,
  data text
);
CREATE UNIQUE INDEX states_by_name ON :"workspace".states (name);
-- Every workspace reads every state (its peers' `federation` outputs); only
-- this one writes this one's.
GRANT USAGE ON SCHEMA :"workspace" TO zerotrust_workspaces;
GRANT SELECT ON :"workspace".states TO zerotrust_workspaces;
GRANT INSERT, UPDATE, DELETE ON :"workspace".states TO :"workspace";
