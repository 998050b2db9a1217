package dev.once;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.ForwardingStore;
import dev.once.store.IdempotencyStore;
import dev.once.store.InMemoryStore;
import dev.once.store.RecordId;
import dev.once.store.StoreUnavailableException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The one observation point of store calls: opened on the calling thread before the call, so that
 * what the store's client does runs beneath it, sent once the call is made, ended with its outcome.
 */
class ObservingStoreTest {

  private static final ClaimRequest REQUEST =
      new ClaimRequest(
          RecordId.of(Scope.of("tenant"), IdempotencyKey.of("k-1")),
          new Fingerprint(1, "ab".repeat(32)),
          Duration.ofSeconds(5),
          Duration.ofMinutes(1));

  /** Stands for a tracer's current span: what the observation made current on a thread. */
  private static final ThreadLocal<@Nullable String> CURRENT = new ThreadLocal<>();

  private final List<String> trace = new CopyOnWriteArrayList<>();
  private final ExecutorService executor = Executors.newSingleThreadExecutor();

  @AfterEach
  void stop() throws InterruptedException {
    executor.shutdownNow();
    executor.awaitTermination(5, TimeUnit.SECONDS);
  }

  /** A listener that opens a scope as a tracer does, and writes down what happens. */
  private final OnceListener tracing =
      new OnceListener() {
        @Override
        public void onEvent(OnceEvent event) {}

        @Override
        public StoreCall storeCall(String operation) {
          trace.add("open " + operation);
          CURRENT.set(operation);
          return new StoreCall() {
            @Override
            public void sent() {
              CURRENT.remove();
              trace.add("sent " + operation);
            }

            @Override
            public void ended(@Nullable Throwable failure) {
              trace.add("ended " + operation + (failure == null ? "" : " with " + failure));
            }

            @Override
            public Runnable within(Runnable task) {
              return () -> {
                CURRENT.set(operation);
                try {
                  task.run();
                } finally {
                  CURRENT.remove();
                }
              };
            }
          };
        }
      };

  /** A store whose client writes down the span it finds current, as a JDBC driver's would. */
  private IdempotencyStore client(IdempotencyStore store) {
    return new ForwardingStore() {
      @Override
      protected IdempotencyStore delegate() {
        return store;
      }

      @Override
      public ClaimResult claim(ClaimRequest request) {
        trace.add("client beneath " + CURRENT.get());
        return super.claim(request);
      }
    };
  }

  @Test
  void aBlockingCallRunsBeneathItsObservationOnTheCallingThread() {
    ObservingStore store = new ObservingStore(client(InMemoryStore.create()), tracing);

    store.claim(REQUEST);

    assertThat(trace)
        .containsExactly("open claim", "client beneath claim", "sent claim", "ended claim");
    assertThat(CURRENT.get()).isNull();
  }

  @Test
  void anAsynchronousCallOfABlockingStoreRunsBeneathItsObservationOnTheExecutor() throws Exception {
    ObservingStore store = new ObservingStore(client(InMemoryStore.create()), tracing);

    // The forwarding store has no asynchronous client: its claim runs on the executor.
    store.claimAsync(REQUEST, executor).toCompletableFuture().get(5, TimeUnit.SECONDS);

    assertThat(trace).contains("client beneath claim");
    assertThat(trace.indexOf("open claim")).isLessThan(trace.indexOf("client beneath claim"));
    assertThat(trace).endsWith("ended claim");
    assertThat(CURRENT.get()).isNull();
  }

  /**
   * Every asynchronous call of the SPI, found by reflection so that a call added later is covered
   * too, is observed and reaches the store's own asynchronous method: a store whose client is
   * asynchronous (Redis, the embedded store answering on its writer) stays so when observed,
   * instead of falling back to its blocking call on an executor thread. {@code giveBackUnusedAsync}
   * is left out: it is not meant to be overridden, and goes through {@code releaseAsync} or {@code
   * endLeaseAsync}, which are.
   */
  @Test
  void everyAsynchronousCallIsObservedAndReachesTheStoresOwnAsynchronousMethod() throws Exception {
    List<String> reached = new CopyOnWriteArrayList<>();
    IdempotencyStore nativeAsync =
        (IdempotencyStore)
            Proxy.newProxyInstance(
                IdempotencyStore.class.getClassLoader(),
                new Class<?>[] {IdempotencyStore.class},
                (proxy, method, args) -> {
                  reached.add(method.getName());
                  return CompletableFuture.completedFuture(null);
                });
    Executor blocking = task -> reached.add("the blocking fallback");
    ObservingStore store = new ObservingStore(nativeAsync, tracing);
    List<Method> asynchronous =
        Arrays.stream(IdempotencyStore.class.getMethods())
            .filter(m -> m.getName().endsWith("Async"))
            .filter(m -> !m.getName().equals("giveBackUnusedAsync"))
            .toList();
    assertThat(asynchronous)
        .extracting(Method::getName)
        .contains("claimAsync", "endLeaseAsync", "heartbeatAsync", "finishAllAsync");

    for (Method method : asynchronous) {
      reached.clear();
      trace.clear();
      Object[] args =
          Arrays.stream(method.getParameterTypes()).map(type -> argument(type, blocking)).toArray();

      CompletionStage<?> answer = (CompletionStage<?>) method.invoke(store, args);

      assertThat(reached).as(method.getName()).containsExactly(method.getName());
      answer.toCompletableFuture().get(5, TimeUnit.SECONDS);
      assertThat(trace).as(method.getName()).hasSize(3);
      assertThat(trace.get(0)).as(method.getName()).startsWith("open ");
      assertThat(trace.get(2)).as(method.getName()).startsWith("ended ");
    }
  }

  private static Object argument(Class<?> type, Executor blocking) {
    if (type == RecordId.class) {
      return REQUEST.id();
    } else if (type == ClaimRequest.class) {
      return REQUEST;
    } else if (type == long.class) {
      return 1L;
    } else if (type == byte[].class) {
      return new byte[] {1};
    } else if (type == Duration.class) {
      return Duration.ofSeconds(5);
    } else if (type == Executor.class) {
      return blocking;
    } else if (type == List.class || type == Collection.class) {
      return List.of();
    }
    throw new AssertionError("no argument of " + type + " for an asynchronous store call");
  }

  @Test
  void aFailedCallEndsItsObservationWithTheFailure() {
    ObservingStore store = new ObservingStore(new FakeUnavailableStore(), tracing);

    assertThatThrownBy(() -> store.claim(REQUEST)).isInstanceOf(StoreUnavailableException.class);

    assertThat(trace).hasSize(3);
    assertThat(trace.get(2))
        .startsWith("ended claim with " + StoreUnavailableException.class.getName());
  }

  @Test
  void aListenerThatThrowsNeverBreaksAStoreCall() throws Exception {
    OnceListener broken =
        new OnceListener() {
          @Override
          public void onEvent(OnceEvent event) {}

          @Override
          public StoreCall storeCall(String operation) {
            if (operation.equals("get")) {
              throw new IllegalStateException("a broken listener");
            }
            return new StoreCall() {
              @Override
              public void sent() {
                throw new IllegalStateException("a broken listener");
              }

              @Override
              public void ended(@Nullable Throwable failure) {
                throw new IllegalStateException("a broken listener");
              }

              @Override
              public Runnable within(Runnable task) {
                throw new IllegalStateException("a broken listener");
              }
            };
          }
        };
    ObservingStore store = new ObservingStore(client(InMemoryStore.create()), broken);

    assertThat(store.claim(REQUEST)).isInstanceOf(ClaimResult.Claimed.class);
    assertThat(store.get(REQUEST.id())).isPresent();
    assertThat(store.claimAsync(REQUEST, executor).toCompletableFuture().get(5, TimeUnit.SECONDS))
        .isInstanceOf(ClaimResult.Existing.class);
  }

  @Test
  void theListenersTimingIsTheDefaultObservation() {
    RecordingListener listener = new RecordingListener();
    ObservingStore store = new ObservingStore(InMemoryStore.create(), listener);

    assertThat(store.inFlight(Duration.ZERO, 10).records()).isEmpty();
    store.claim(REQUEST);

    assertThat(listener.storeCalls).containsExactly("inFlight", "claim");
  }

  @Test
  void observationsOfSeveralListenersNestInOrder() {
    List<String> order = new CopyOnWriteArrayList<>();
    StoreCall all = StoreCall.all(List.of(named("outer", order), named("inner", order)));

    all.within(() -> order.add("task")).run();
    all.sent();
    all.ended(null);

    assertThat(order)
        .containsExactly(
            "outer within",
            "inner within",
            "task",
            "sent inner",
            "sent outer",
            "ended outer",
            "ended inner");
  }

  private static StoreCall named(String name, List<String> order) {
    return new StoreCall() {
      @Override
      public void sent() {
        order.add("sent " + name);
      }

      @Override
      public void ended(@Nullable Throwable failure) {
        order.add("ended " + name);
      }

      @Override
      public Runnable within(Runnable task) {
        return () -> {
          order.add(name + " within");
          task.run();
        };
      }
    };
  }
}
