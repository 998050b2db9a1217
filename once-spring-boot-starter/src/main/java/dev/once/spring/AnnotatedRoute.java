package dev.once.spring;

/**
 * One route from an {@link Idempotent} handler.
 *
 * @param pattern the once-http pattern
 * @param layer the handler's own settings
 * @param handler the method, for messages
 */
record AnnotatedRoute(String pattern, PolicyMapper.Layer layer, String handler) {}
