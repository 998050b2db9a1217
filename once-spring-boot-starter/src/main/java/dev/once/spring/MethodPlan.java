package dev.once.spring;

import dev.once.ExecutionPolicy;
import dev.once.Fingerprint;
import dev.once.IdempotencyKey;
import dev.once.InvalidIdempotencyKeyException;
import dev.once.ResultCodec;
import dev.once.Scope;
import dev.once.fingerprint.Fingerprinter;
import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.BeanResolver;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.util.ClassUtils;

/**
 * What the starter knows about one {@code @Idempotent(key = ...)} method, worked out once when the
 * bean is proxied: its expressions, parsed (a syntax error stops startup), the shape of its result,
 * and, once every bean exists, its policy and codec ({@link #bind}). Calls then only evaluate.
 */
final class MethodPlan {

  /** How the method answers, which decides the engine call and how the result is handed back. */
  enum Kind {
    /** A value (or {@code void}), in the calling thread: {@code Once.execute}. */
    BLOCKING,
    /** A {@link CompletionStage} or {@link CompletableFuture}: {@code Once.executeAsync}. */
    STAGE,
    /** A Reactor {@code Mono}, run when subscribed: {@code Once.executeAsync}. */
    MONO
  }

  /** The values of one call, computed before anything is claimed. */
  record Call(Scope scope, IdempotencyKey key, Fingerprint fingerprint) {}

  /** The parts that need beans: settled after every singleton exists. */
  record Bound(ExecutionPolicy policy, ResultCodec<Object> codec) {}

  /**
   * The attributes that only a method call has: every other attribute of {@link Idempotent} is a
   * policy property ({@code RouteOptionsBindingTest} checks both halves).
   */
  static final Set<String> CALL_ATTRIBUTES =
      Set.of("key", "scope", "fingerprint", "codec", "noRetryFor");

  private static final SpelExpressionParser PARSER = new SpelExpressionParser();
  private static final ParameterNameDiscoverer PARAMETER_NAMES =
      new DefaultParameterNameDiscoverer();
  private static final String REACTOR_MONO = "reactor.core.publisher.Mono";
  private static final String REACTIVE_PUBLISHER = "org.reactivestreams.Publisher";

  /** Fingerprints of method calls are apart from HTTP ones even for equal bytes. */
  private static final String FINGERPRINT_CONTEXT = "once-spring-method";

  private final String name;
  private final Method method;
  private final Idempotent annotation;
  private final Kind kind;
  private final Type resultType;
  private final boolean tellsReplays;
  private final Expression key;
  private final @Nullable Expression scope;
  private final Scope defaultScope;
  private final List<Expression> fingerprint;
  private final NoRetryFor classifier;
  private volatile @Nullable Bound bound;

  private MethodPlan(Method method, Idempotent annotation, String name) {
    this.name = name;
    this.method = method;
    this.annotation = annotation;
    this.kind = kindOf(method, name);
    Type value = valueTypeOf(method, kind);
    this.tellsReplays = isResult(value);
    this.resultType = tellsReplays ? typeArgument(value) : value;
    this.key = parse("key", annotation.key());
    this.scope = annotation.scope().isEmpty() ? null : parse("scope", annotation.scope());
    this.defaultScope = Scope.of(method.getDeclaringClass().getName() + "#" + method.getName());
    List<Expression> parts = new ArrayList<>();
    for (String part : annotation.fingerprint()) {
      parts.add(parse("fingerprint", part));
    }
    this.fingerprint = List.copyOf(parts);
    this.classifier = new NoRetryFor(List.of(annotation.noRetryFor()));
    refuseHttpAttributes();
  }

  /**
   * The plan of {@code method}, or null if its {@code @Idempotent} has no key (an HTTP handler, or
   * nothing to do).
   *
   * @throws InvalidOncePropertyException if the annotation cannot work: a bad expression, an HTTP
   *     attribute, a {@code Flux}
   */
  static @Nullable MethodPlan of(Method method, @Nullable Idempotent annotation) {
    if (annotation == null) {
      return null;
    }
    String name = ClassUtils.getUserClass(method.getDeclaringClass()).getSimpleName();
    name = name + "#" + method.getName();
    if (annotation.key().isEmpty()) {
      refuseMethodAttributesWithoutKey(annotation, name);
      return null;
    }
    return new MethodPlan(method, annotation, name);
  }

  String name() {
    return name;
  }

  Kind kind() {
    return kind;
  }

  Idempotent annotation() {
    return annotation;
  }

  /**
   * The type the codec reads a recorded result back as: the value inside a stage or a Mono, and
   * inside an {@link Idempotent.Result}.
   */
  Type resultType() {
    return resultType;
  }

  /** Whether the method returns {@link Idempotent.Result}: its callers learn what was a replay. */
  boolean tellsReplays() {
    return tellsReplays;
  }

  /**
   * What the caller gets for the call that ran the method: its own value, or a {@link
   * Idempotent.Result} saying it was not a replay (whatever the method put in it).
   */
  @Nullable Object firstRun(@Nullable Object value) {
    if (!tellsReplays) {
      return value;
    }
    return Idempotent.Result.of(value instanceof Idempotent.Result<?> r ? r.value() : value);
  }

  /** What the caller gets for a call answered from the record, whose value the codec decoded. */
  @Nullable Object replay(@Nullable Object decoded) {
    return tellsReplays ? new Idempotent.Result<>(decoded, true) : decoded;
  }

  NoRetryFor classifier() {
    return classifier;
  }

  void bind(Bound bound) {
    this.bound = bound;
  }

  Bound bound() {
    Bound b = bound;
    if (b == null) {
      throw new IllegalStateException(
          "@Idempotent on " + name + " is called before the application finished starting");
    }
    return b;
  }

  /**
   * Evaluates the expressions over the arguments.
   *
   * @param json writes the fingerprinted values as JSON
   * @throws IdempotencyKeyInvalidException if a value cannot be computed: nothing is claimed
   */
  Call call(Object[] args, BeanResolver beans, Function<List<@Nullable Object>, byte[]> json) {
    MethodBasedEvaluationContext context =
        new MethodBasedEvaluationContext(args, method, args, PARAMETER_NAMES);
    context.setBeanResolver(beans);
    Object keyValue = evaluate("key", key, context);
    if (keyValue == null) {
      throw new IdempotencyKeyInvalidException(
          "the key of " + name + " (" + annotation.key() + ") is null; nothing was claimed", null);
    }
    IdempotencyKey idempotencyKey;
    try {
      idempotencyKey = IdempotencyKey.of(keyValue.toString());
    } catch (InvalidIdempotencyKeyException e) {
      throw new IdempotencyKeyInvalidException(
          "the key of " + name + " is not a valid key: " + e.getMessage(), e);
    }
    Scope callScope = defaultScope;
    if (scope != null) {
      Object scopeValue = evaluate("scope", scope, context);
      if (scopeValue == null) {
        throw new IdempotencyKeyInvalidException(
            "the scope of " + name + " (" + annotation.scope() + ") is null", null);
      }
      try {
        callScope = Scope.of(scopeValue.toString());
      } catch (IllegalArgumentException e) {
        throw new IdempotencyKeyInvalidException(
            "the scope of " + name + " is not a valid scope: " + e.getMessage(), e);
      }
    }
    List<@Nullable Object> values = new ArrayList<>();
    if (fingerprint.isEmpty()) {
      values.addAll(Arrays.asList(args));
    } else {
      for (Expression part : fingerprint) {
        values.add(evaluate("fingerprint", part, context));
      }
    }
    byte[] body;
    try {
      body = json.apply(values);
    } catch (RuntimeException e) {
      // The message may quote a value; only the type of failure is passed on.
      throw new IdempotencyKeyInvalidException(
          "the fingerprinted arguments of "
              + name
              + " cannot be written as JSON ("
              + e.getClass().getSimpleName()
              + "); choose them with @Idempotent(fingerprint = ...)",
          null);
    }
    return new Call(
        callScope, idempotencyKey, Fingerprinter.defaults().json(body, FINGERPRINT_CONTEXT));
  }

  private @Nullable Object evaluate(
      String attribute, Expression expression, MethodBasedEvaluationContext context) {
    try {
      return expression.getValue(context);
    } catch (EvaluationException e) {
      throw new IdempotencyKeyInvalidException(
          "@Idempotent("
              + attribute
              + " = \""
              + expression.getExpressionString()
              + "\") on "
              + name
              + " failed: "
              + e.getMessage(),
          e);
    }
  }

  private Expression parse(String attribute, String text) {
    try {
      return PARSER.parseExpression(text);
    } catch (ParseException e) {
      throw new InvalidOncePropertyException(
          attribute(attribute), text, "not a SpEL expression: " + e.getMessage());
    }
  }

  private String attribute(String attribute) {
    return "@Idempotent(" + attribute + ") on " + name;
  }

  /** The HTTP attributes mean nothing for a method call; refused rather than ignored. */
  private void refuseHttpAttributes() {
    refuse("methods", annotation.methods().length > 0);
    refuse("keyRequired", annotation.keyRequired().length > 0);
    refuse("maxWaitersPerKey", annotation.maxWaitersPerKey().length > 0);
    refuse("maxRequestBytes", !annotation.maxRequestBytes().isEmpty());
    refuse("excludedJsonPointers", annotation.excludedJsonPointers().length > 0);
    refuse("replayHeaderDenylist", annotation.replayHeaderDenylist().length > 0);
    refuse("transactional", annotation.transactional().length > 0);
  }

  private void refuse(String attribute, boolean set) {
    if (set) {
      throw new InvalidOncePropertyException(
          attribute(attribute),
          null,
          "applies to HTTP handlers only, not to a method with a key expression");
    }
  }

  private static void refuseMethodAttributesWithoutKey(Idempotent a, String name) {
    boolean methodOnly =
        !a.scope().isEmpty()
            || a.fingerprint().length > 0
            || !a.codec().isEmpty()
            || a.noRetryFor().length > 0;
    if (methodOnly) {
      throw new InvalidOncePropertyException(
          "@Idempotent(key) on " + name,
          null,
          "scope, fingerprint, codec and noRetryFor need a key expression");
    }
  }

  private static Kind kindOf(Method method, String name) {
    Class<?> type = method.getReturnType();
    if (type == CompletionStage.class || type == CompletableFuture.class) {
      return Kind.STAGE;
    }
    if (isA(type, REACTOR_MONO)) {
      return Kind.MONO;
    }
    String why = null;
    if (CompletionStage.class.isAssignableFrom(type)) {
      why = "declare CompletionStage or CompletableFuture, not a subtype";
    } else if (Future.class.isAssignableFrom(type)) {
      why = "a Future cannot be awaited without a thread; return a CompletionStage";
    } else if (isA(type, REACTIVE_PUBLISHER)) {
      why =
          "a stream (Flux, Publisher) has no single result to record; return a Mono, or make"
              + " each element's handling idempotent";
    }
    if (why != null) {
      throw new InvalidOncePropertyException(
          "@Idempotent(key) on " + name, type.getName(), "unsupported return type: " + why);
    }
    return Kind.BLOCKING;
  }

  /**
   * Whether {@code type} is or extends the class or interface named so, compared by name so that an
   * optional library need not be on the class path.
   */
  private static boolean isA(@Nullable Class<?> type, String className) {
    if (type == null) {
      return false;
    }
    if (type.getName().equals(className) || isA(type.getSuperclass(), className)) {
      return true;
    }
    for (Class<?> i : type.getInterfaces()) {
      if (isA(i, className)) {
        return true;
      }
    }
    return false;
  }

  /**
   * The type of the value the method produces: its return type, or what its stage or Mono holds.
   */
  private static Type valueTypeOf(Method method, Kind kind) {
    Type type = method.getGenericReturnType();
    return kind == Kind.BLOCKING ? type : typeArgument(type);
  }

  private static boolean isResult(Type type) {
    return type == Idempotent.Result.class
        || type instanceof ParameterizedType p && p.getRawType() == Idempotent.Result.class;
  }

  /** The one type argument of a generic type; {@code Object} for a raw one. */
  private static Type typeArgument(Type type) {
    return type instanceof ParameterizedType p ? p.getActualTypeArguments()[0] : Object.class;
  }
}
