/**
 * The JDBC support API: what other modules that keep tables of their own (the outbox) share with
 * the JDBC stores, so that a table name is validated one way and a schema file is applied one way.
 *
 * <p>It is public on purpose, and kept small and stable like the rest of Once's API: a module
 * depends on it, never on the stores' package-private implementation. The architecture test ({@code
 * once-architecture}) holds every module to that.
 */
package dev.once.store.jdbc.support;
