package dev.once.spring;

import dev.once.ExecutionPolicy;
import dev.once.ExecutionResult;
import dev.once.FinalFailure;
import dev.once.Once;
import dev.once.Operation;
import dev.once.OperationFailedException;
import dev.once.ResultCodec;
import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.BeanUtils;
import org.springframework.beans.factory.BeanNotOfRequiredTypeException;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.core.MethodClassKey;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * Runs {@code @Idempotent(key = ...)} bean methods through the engine: the advice of {@link
 * OnceMethodsAutoConfiguration}'s advisor, and the registry of every such method's {@link
 * MethodPlan}.
 *
 * <p>A plan is made when the advisor first matches the method (while its bean is proxied, so a bad
 * annotation stops startup), and bound to its policy and codec once every singleton exists. A call
 * then evaluates the expressions and hands the engine the method as its operation: {@code
 * Once.execute} for a blocking method, {@code Once.executeAsync} for a {@code CompletionStage} or a
 * {@code Mono}. What to record, release or abandon, and what a retry gets, is the engine's
 * decision; this class only turns its {@link ExecutionResult} back into a return value or an
 * exception.
 */
final class IdempotentMethods implements MethodInterceptor, SmartInitializingSingleton {

  private static final Logger log = LoggerFactory.getLogger(IdempotentMethods.class);
  private static final boolean JACKSON = ClassUtils.isPresent(JacksonMethodJson.MAPPER_CLASS, null);
  private static final ResultCodec<Object> NO_VALUE =
      new ResultCodec<>() {
        @Override
        public byte[] encode(@Nullable Object value) {
          return new byte[0];
        }

        @Override
        @SuppressWarnings("NullAway") // a void method's result is null, replayed as null
        public Object decode(byte[] bytes) {
          return null;
        }
      };

  /** Where an asynchronous method starts when the claim was answered on another thread. */
  static final String TASK_EXECUTOR = "applicationTaskExecutor";

  private final ListableBeanFactory beans;
  private final Environment environment;
  private final Map<MethodClassKey, Optional<MethodPlan>> plans = new ConcurrentHashMap<>();
  private volatile @Nullable Wiring runtime;

  /** What a call needs from the application's beans, looked up once they all exist. */
  private record Wiring(
      Once once,
      BeanFactoryResolver resolver,
      @Nullable Json json,
      Executor executor,
      OnceProperties properties) {}

  IdempotentMethods(ListableBeanFactory beans, Environment environment) {
    this.beans = beans;
    this.environment = environment;
  }

  /**
   * The plan of {@code method} on {@code targetClass}, or null if it is not a method-level {@code
   * Idempotent}.
   */
  @Nullable MethodPlan plan(Method method, @Nullable Class<?> targetClass) {
    Class<?> target = targetClass == null ? method.getDeclaringClass() : targetClass;
    if (!AnnotationUtils.isCandidateClass(target, Idempotent.class)) {
      return null;
    }
    return plans
        .computeIfAbsent(
            new MethodClassKey(method, target), k -> Optional.ofNullable(find(method, target)))
        .orElse(null);
  }

  private @Nullable MethodPlan find(Method method, Class<?> target) {
    Method specific = AopUtils.getMostSpecificMethod(method, target);
    Idempotent onMethod = AnnotatedElementUtils.findMergedAnnotation(specific, Idempotent.class);
    if (onMethod == null) {
      Idempotent onType = AnnotatedElementUtils.findMergedAnnotation(target, Idempotent.class);
      if (onType != null && !onType.key().isEmpty()) {
        throw new InvalidOncePropertyException(
            "@Idempotent(key) on " + ClassUtils.getUserClass(target).getSimpleName(),
            onType.key(),
            "a key expression belongs on a method: it reads that method's arguments");
      }
      return null;
    }
    MethodPlan plan = MethodPlan.of(specific, onMethod);
    Wiring r = runtime;
    if (plan != null && r != null) {
      // A bean made after startup (lazy, prototype): bound now, and refused now if it cannot work.
      bind(plan, r);
    }
    return plan;
  }

  @Override
  public void afterSingletonsInstantiated() {
    Wiring r =
        new Wiring(
            beans.getBean(Once.class),
            new BeanFactoryResolver(beans),
            JACKSON ? JacksonMethodJson.of(beans) : null,
            executor(),
            beans.getBean(OnceProperties.class));
    for (Optional<MethodPlan> plan : plans.values()) {
      plan.ifPresent(p -> bind(p, r));
    }
    runtime = r;
    long count = plans.values().stream().filter(Optional::isPresent).count();
    if (count > 0) {
      log.info("{} @Idempotent bean method(s) run through Once", count);
    }
  }

  private Executor executor() {
    if (beans.containsBean(TASK_EXECUTOR)) {
      try {
        return beans.getBean(TASK_EXECUTOR, Executor.class);
      } catch (BeanNotOfRequiredTypeException e) {
        // Not an executor after all: fall through to the common pool.
      }
    }
    return ForkJoinPool.commonPool();
  }

  private void bind(MethodPlan plan, Wiring r) {
    Json json = r.json();
    if (json == null) {
      throw new InvalidOncePropertyException(
          "@Idempotent(key) on " + plan.name(),
          null,
          "needs Jackson (" + JacksonMethodJson.DEPENDENCY + ") to fingerprint the arguments");
    }
    plan.bind(new MethodPlan.Bound(policy(plan, r.properties()), codec(plan, json)));
  }

  /**
   * The method's execution policy: {@code once.defaults.*}, then the annotation's own attributes,
   * through the same mapping and validation as an HTTP route's.
   */
  private ExecutionPolicy policy(MethodPlan plan, OnceProperties properties) {
    String name = plan.name();
    OnceProperties.Policy own =
        Objects.requireNonNull(
            IdempotentAttributes.policyOf(
                plan.annotation(),
                attribute -> "@Idempotent(" + attribute + ") on " + name,
                environment,
                Set.of()),
            "a method with no mapped HTTP methods always has a policy");
    // A method call is never in transactional mode, whatever HTTP routes inherit.
    OnceProperties.Policy defaults = new OnceProperties.Policy();
    BeanUtils.copyProperties(properties.getDefaults(), defaults);
    defaults.setTransactional(null);
    return PolicyMapper.resolve(
            "@Idempotent on " + name,
            List.of(
                PolicyMapper.Layer.properties("once.defaults", defaults),
                new PolicyMapper.Layer(
                    own, field -> "@Idempotent(" + PolicyMapper.camelCase(field) + ") on " + name)))
        .policy()
        .execution();
  }

  /**
   * The codec of the method's value; for a method returning {@link Idempotent.Result}, it records
   * the value inside, so the record is the same as if the method returned the value itself.
   */
  private ResultCodec<Object> codec(MethodPlan plan, Json json) {
    ResultCodec<Object> value = valueCodec(plan, json);
    return plan.tellsReplays() ? new ResultValueCodec(value) : value;
  }

  @SuppressWarnings("unchecked")
  private ResultCodec<Object> valueCodec(MethodPlan plan, Json json) {
    String bean = plan.annotation().codec();
    if (!bean.isEmpty()) {
      try {
        return beans.getBean(bean, ResultCodec.class);
      } catch (NoSuchBeanDefinitionException e) {
        throw new InvalidOncePropertyException(
            "@Idempotent(codec) on " + plan.name(),
            bean,
            "there is no ResultCodec bean by that name");
      }
    }
    Type type = plan.resultType();
    if (type == void.class || type == Void.class) {
      return NO_VALUE;
    }
    return json.codecs().apply(type);
  }

  /**
   * Writes the value inside the method's {@link Idempotent.Result}; reads the value alone, which
   * {@link Answers} hands back as a replay.
   */
  private record ResultValueCodec(ResultCodec<Object> value) implements ResultCodec<Object> {
    @Override
    @SuppressWarnings("NullAway") // a null value is recorded as a method's null value always is
    public byte[] encode(@Nullable Object result) {
      return value.encode(result instanceof Idempotent.Result<?> r ? r.value() : result);
    }

    @Override
    public Object decode(byte[] bytes) {
      return value.decode(bytes);
    }
  }

  private Wiring runtime(MethodPlan plan) {
    Wiring r = runtime;
    if (r == null) {
      throw new IllegalStateException(
          "@Idempotent on " + plan.name() + " was called before the application finished starting");
    }
    return r;
  }

  // ------------------------------------------------------------------ calls

  @Override
  public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
    Object target = invocation.getThis();
    MethodPlan plan =
        plan(invocation.getMethod(), target == null ? null : AopUtils.getTargetClass(target));
    if (plan == null) {
      return invocation.proceed();
    }
    return switch (plan.kind()) {
      case BLOCKING -> blocking(plan, invocation);
      case STAGE -> async(plan, invocation, IdempotentMethods::asStage);
      case MONO -> ReactorCalls.mono(() -> async(plan, invocation, ReactorCalls::toStage));
    };
  }

  private @Nullable Object blocking(MethodPlan plan, MethodInvocation invocation) throws Throwable {
    Wiring r = runtime(plan);
    MethodPlan.Call call = plan.call(invocation.getArguments(), r.resolver(), writer(r));
    MethodPlan.Bound bound = plan.bound();
    AtomicReference<@Nullable Throwable> thrown = new AtomicReference<>();
    ExecutionResult<Object> result;
    try {
      result =
          r.once()
              .execute(
                  call.scope(),
                  call.key(),
                  call.fingerprint(),
                  bound.codec(),
                  plan.classifier(),
                  bound.policy(),
                  context -> proceed(invocation, thrown));
    } catch (OperationFailedException e) {
      // The engine wraps a checked exception it released the key for; the caller gets the
      // method's own.
      Throwable own = thrown.get();
      throw own != null && e.getCause() == own ? own : e;
    }
    return result.accept(new Answers(plan, thrown.get())).get();
  }

  @SuppressWarnings("NullAway") // a method may return null (or be void): a value like any other
  private static Object proceed(
      MethodInvocation invocation, AtomicReference<@Nullable Throwable> thrown) throws Exception {
    try {
      return invocation.proceed();
    } catch (Exception | Error e) {
      thrown.set(e);
      throw e;
    } catch (Throwable t) {
      thrown.set(t);
      throw new java.lang.reflect.UndeclaredThrowableException(t);
    }
  }

  /**
   * Makes the call through {@code Once.executeAsync}; the returned future completes with the
   * method's value, a replayed one, or the exception a blocking call would throw.
   */
  private CompletableFuture<@Nullable Object> async(
      MethodPlan plan,
      MethodInvocation invocation,
      Function<@Nullable Object, CompletionStage<@Nullable Object>> asStage) {
    CompletableFuture<@Nullable Object> answer = new CompletableFuture<>();
    try {
      Wiring r = runtime(plan);
      MethodPlan.Call call = plan.call(invocation.getArguments(), r.resolver(), writer(r));
      MethodPlan.Bound bound = plan.bound();
      AtomicReference<@Nullable Throwable> thrown = new AtomicReference<>();
      Thread caller = Thread.currentThread();
      // The engine calls the operation where the claim was answered: here for a store that
      // answers at once, else on a store client's thread (a Redis I/O thread), where the method's
      // own synchronous part must not run.
      Operation<CompletionStage<@Nullable Object>> operation =
          context ->
              Thread.currentThread() == caller
                  ? start(invocation, asStage, thrown)
                  : CompletableFuture.supplyAsync(
                          () -> start(invocation, asStage, thrown), r.executor())
                      .thenCompose(stage -> stage);
      r.once()
          .executeAsync(
              call.scope(),
              call.key(),
              call.fingerprint(),
              bound.codec(),
              plan.classifier(),
              bound.policy(),
              operation)
          .whenComplete(
              (result, failure) -> {
                if (failure != null) {
                  answer.completeExceptionally(unwrap(failure));
                } else {
                  result.accept(new Answers(plan, thrown.get())).complete(answer);
                }
              });
    } catch (RuntimeException e) {
      answer.completeExceptionally(e);
    }
    return answer;
  }

  private static CompletionStage<@Nullable Object> start(
      MethodInvocation invocation,
      Function<@Nullable Object, CompletionStage<@Nullable Object>> asStage,
      AtomicReference<@Nullable Throwable> thrown) {
    CompletionStage<@Nullable Object> stage;
    try {
      stage = asStage.apply(invocation.proceed());
    } catch (Throwable t) {
      stage = CompletableFuture.failedFuture(t);
    }
    return stage.whenComplete(
        (value, failure) -> {
          if (failure != null) {
            thrown.set(unwrap(failure));
          }
        });
  }

  @SuppressWarnings("unchecked")
  private static CompletionStage<@Nullable Object> asStage(@Nullable Object value) {
    if (value == null) {
      throw new NullPointerException("the method returned null instead of a CompletionStage");
    }
    return (CompletionStage<@Nullable Object>) value;
  }

  private static Throwable unwrap(Throwable failure) {
    Throwable t = failure;
    while ((t instanceof CompletionException || t instanceof ExecutionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  /**
   * What the caller gets: a value, or an exception to throw (or to complete a future with).
   *
   * @param value the value, if {@code error} is null
   * @param error the exception, or null
   */
  private record Answer(@Nullable Object value, @Nullable Throwable error) {
    static Answer of(@Nullable Object value) {
      return new Answer(value, null);
    }

    static Answer failing(Throwable error) {
      return new Answer(null, error);
    }

    @Nullable Object get() throws Throwable {
      if (error != null) {
        throw error;
      }
      return value;
    }

    void complete(CompletableFuture<@Nullable Object> future) {
      if (error != null) {
        future.completeExceptionally(error);
      } else {
        future.complete(value);
      }
    }
  }

  /** The engine's answers, as a method's. */
  private static final class Answers implements ExecutionResult.Visitor<Object, Answer> {
    private final MethodPlan plan;
    private final @Nullable Throwable thrown;

    /**
     * @param thrown what the method threw in this call, if it ran and threw
     */
    Answers(MethodPlan plan, @Nullable Throwable thrown) {
      this.plan = plan;
      this.thrown = thrown;
    }

    @Override
    public Answer executed(ExecutionResult.Executed<Object> executed) {
      return Answer.of(plan.firstRun(executed.value()));
    }

    @Override
    public Answer replayed(ExecutionResult.Replayed<Object> replayed) {
      return Answer.of(plan.replay(replayed.value()));
    }

    @Override
    public Answer failed(ExecutionResult.Failed<Object> failed) {
      FinalFailure failure = failed.failure();
      if (!failure.replayed() && thrown != null) {
        // It failed just now, in this call: the caller gets the method's own exception.
        return Answer.failing(thrown);
      }
      return Answer.failing(plan.classifier().replayed(failure));
    }

    @Override
    public Answer inFlight(ExecutionResult.InFlight<Object> inFlight) {
      return Answer.failing(new IdempotencyInFlightException(plan.name(), inFlight.retryAfter()));
    }

    @Override
    public Answer fingerprintMismatch(ExecutionResult.FingerprintMismatch<Object> mismatch) {
      return Answer.failing(new IdempotencyKeyReusedException(plan.name()));
    }

    @Override
    public Answer responseUnavailable(ExecutionResult.ResponseUnavailable<Object> unavailable) {
      return Answer.failing(new IdempotencyResultUnavailableException(plan.name()));
    }

    @Override
    public Answer storeUnavailable(ExecutionResult.StoreUnavailable<Object> unavailable) {
      return Answer.failing(
          new IdempotencyStoreUnavailableException(
              plan.name(), unavailable.retryAfter(), unavailable.cause()));
    }
  }

  /**
   * JSON for fingerprints and results, made by the Boot line's {@link JacksonMethodJson} (the only
   * class that names a Jackson type, so that Jackson stays optional).
   *
   * @param writer writes fingerprinted values
   * @param codecs the codec reading a result back as a type
   */
  record Json(
      Function<List<@Nullable Object>, byte[]> writer,
      Function<Type, ResultCodec<Object>> codecs) {}

  private static Function<List<@Nullable Object>, byte[]> writer(Wiring r) {
    // bind() refused every plan when there is no JSON, so no call gets here without it.
    return Objects.requireNonNull(r.json(), "bound plans have JSON").writer();
  }
}
