/*
 * project_init.h - creating a project as one step, and opening a
 * project's database: `ctune-server init DIR` either leaves a complete
 * project (directory, secret, config, database at the latest schema) or
 * nothing it made, and never takes over a database that already holds a
 * project.
 */
#ifndef CT_PROJECT_INIT_H
#define CT_PROJECT_INIT_H

struct ct_server;
struct ct_project_opts;

/* Create the project in dir (ct_project_init) and its database. On any
 * failure everything this call created is removed again: dir itself (and
 * the parents it made) when it did not exist, else only the entries that
 * were not in it before. Returns 0 or a CT_E* code with the detail in
 * ct_errmsg(): CT_EEXISTS (dir is already a project, or the database
 * already holds one), a database or file error. */
int ct_project_create(const char *dir, const struct ct_project_opts *o);

/* Start the database library for the loaded project srv, open it and bring
 * the schema up to date; with fresh set, first refuse (CT_EEXISTS) a
 * database that already holds a crowdtune project. The library stays
 * initialised (ct_db_global_end() is the caller's, also after a failure). */
int ct_project_db_start(struct ct_server *srv, int fresh);

#endif
