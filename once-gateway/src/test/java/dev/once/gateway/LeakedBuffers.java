package dev.once.gateway;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails the test class after which a Netty buffer was found dropped without its release. The Netty
 * core and the Redis store's client pass pooled buffers from hand to hand; one that is never
 * released is memory the pool never gets back, and a path that leaks one a request exhausts direct
 * memory under load long after every test passed. So every buffer the suite's in-process gateways
 * allocate is tracked ({@link ResourceLeakDetector.Level#PARANOID}: each one, with where it was
 * touched), and after each test class the collector is run and every tracked buffer it found
 * unreachable and unreleased is reported here as that class's failure, with its records.
 *
 * <p>Registered for every test class of this module through {@code META-INF/services} (and {@code
 * junit-platform.properties}), so it is installed before the first buffer exists. Before the first
 * class it proves it can fail: a buffer dropped on purpose must be reported, or the suite stops.
 */
public final class LeakedBuffers implements AfterAllCallback {

  /** Touched onto the buffer dropped on purpose, so its report is told from a real one. */
  private static final String CANARY = "once-leak-canary";

  /** How long a check waits for the collector to find what was dropped. */
  private static final int ROUNDS = 20;

  private static final List<String> REPORTS = new CopyOnWriteArrayList<>();

  static {
    ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
    ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new Reporting());
    proveReported();
  }

  @Override
  public void afterAll(ExtensionContext context) {
    List<String> leaks = collect(false);
    if (!leaks.isEmpty()) {
      throw new AssertionError(
          leaks.size()
              + " Netty buffer(s) dropped unreleased by "
              + context.getDisplayName()
              + " or a test before it:\n"
              + String.join("\n\n", leaks));
    }
  }

  /**
   * Drops a buffer without releasing it and waits for its report: if none comes, buffers are not
   * being tracked (Netty's detector was made before this factory was installed), and every check
   * here would pass whatever leaked.
   */
  private static void proveReported() {
    ByteBuf dropped = PooledByteBufAllocator.DEFAULT.directBuffer(16);
    dropped.touch(CANARY);
    dropped = null;
    List<String> reports = new ArrayList<>();
    for (int i = 0; i < ROUNDS && reports.stream().noneMatch(r -> r.contains(CANARY)); i++) {
      reports.addAll(collect(true));
    }
    if (reports.stream().noneMatch(r -> r.contains(CANARY))) {
      throw new ExtensionConfigurationException(
          "a Netty buffer dropped on purpose was not reported: leak detection is not working");
    }
    reports.removeIf(r -> r.contains(CANARY));
    REPORTS.addAll(reports); // anything else is a real leak, reported after the first class
  }

  /**
   * Runs the collector, then allocates and releases a buffer: Netty looks for the unreachable
   * tracked buffers only when it tracks a new one. Returns what was reported since the last call.
   */
  private static List<String> collect(boolean once) {
    for (int i = 0; i < (once ? 1 : 3); i++) {
      System.gc();
      try {
        Thread.sleep(50); // the reference handler enqueues what the collector found
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
      PooledByteBufAllocator.DEFAULT.directBuffer(1).release();
    }
    List<String> reports = new ArrayList<>(REPORTS);
    REPORTS.removeAll(reports);
    return reports;
  }

  /** Makes detectors that hand their reports here as well as to Netty's log. */
  private static final class Reporting extends ResourceLeakDetectorFactory {

    @Override
    @SuppressWarnings("deprecation") // the method Netty 4.1 makes every detector through
    public <T> ResourceLeakDetector<T> newResourceLeakDetector(
        Class<T> resource, int samplingInterval, long maxActive) {
      return new ResourceLeakDetector<>(resource, samplingInterval) {
        @Override
        protected boolean needReport() {
          return true; // whatever the log's level
        }

        @Override
        protected void reportTracedLeak(String resourceType, String records) {
          REPORTS.add(resourceType + " leaked:" + records);
        }

        @Override
        protected void reportUntracedLeak(String resourceType) {
          REPORTS.add(resourceType + " leaked (untraced)");
        }
      };
    }
  }
}
