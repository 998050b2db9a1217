/**
 * The Once gateway: a standalone reverse proxy that gives any HTTP service the idempotency-key
 * semantics of DESIGN §4. Run it with {@code java -jar once-gateway.jar --upstream URL}; embed it
 * with {@link dev.once.gateway.Gateway#start(GatewayConfig)}. See {@code docs/gateway.md}.
 */
package dev.once.gateway;
