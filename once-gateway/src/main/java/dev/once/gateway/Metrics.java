package dev.once.gateway;

import dev.once.OnceListener;
import dev.once.micrometer.OnceMetrics;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.BaseUnits;
import io.micrometer.core.instrument.binder.jetty.JettyConnectionMetrics;
import io.micrometer.core.instrument.binder.jetty.JettyServerThreadPoolMetrics;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.netty4.NettyAllocatorMetrics;
import io.micrometer.core.instrument.binder.netty4.NettyEventExecutorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.netty.buffer.PooledByteBufAllocator;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.thread.ThreadPool;

/**
 * The meters the gateway publishes on {@code /metrics}: idempotency events, JVM, and Jetty basics.
 */
final class Metrics {

  private Metrics() {}

  /** The idempotency listener: counts every event and times every store call (once-micrometer). */
  static OnceListener listener(MeterRegistry registry) {
    return OnceMetrics.of(registry);
  }

  /** The bytes of bodies held now ({@code once_gateway_buffered_bytes}), against the budget. */
  static void bindBudget(MeterRegistry registry, BufferBudget budget) {
    Gauge.builder("once.gateway.buffered", budget, BufferBudget::used)
        .baseUnit(BaseUnits.BYTES)
        .description("request and response body bytes held in memory; max-buffered-bytes caps it")
        .register(registry);
  }

  /**
   * Access lines dropped ({@code once_gateway_access_lines_dropped_total}): output that stalled.
   */
  static void bindAccessLines(MeterRegistry registry, AccessLines lines) {
    FunctionCounter.builder("once.gateway.access.lines.dropped", lines, AccessLines::droppedTotal)
        .description("access lines dropped because standard output did not take them in time")
        .register(registry);
  }

  /** JVM and process meters. */
  static void bindJvm(MeterRegistry registry) {
    new JvmMemoryMetrics().bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ClassLoaderMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
    // Closed with the registry's process: the gateway owns its JVM.
    @SuppressWarnings("resource")
    JvmGcMetrics gc = new JvmGcMetrics();
    gc.bindTo(registry);
  }

  /** Jetty's thread pool and connections, per connector. */
  static void bindJetty(MeterRegistry registry, Server server, ThreadPool pool) {
    new JettyServerThreadPoolMetrics(pool, Tags.empty()).bindTo(registry);
    JettyConnectionMetrics.addToAllConnectors(server, registry);
  }

  /**
   * The Netty core's loops (tasks waiting on each: a loop that falls behind shows here, as busy
   * threads do on Jetty's) and its pooled buffers.
   */
  static void bindNetty(MeterRegistry registry, NettyLoops loops) {
    new NettyEventExecutorMetrics(loops.group).bindTo(registry);
    new NettyAllocatorMetrics(PooledByteBufAllocator.DEFAULT).bindTo(registry);
  }
}
