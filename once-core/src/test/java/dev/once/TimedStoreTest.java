package dev.once;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.store.InMemoryStore;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class TimedStoreTest {

  @Test
  void theInFlightListingIsReportedToTheListenerAsItsOwnOperation() {
    RecordingListener listener = new RecordingListener();
    TimedStore store = new TimedStore(InMemoryStore.create(), listener);

    assertThat(store.inFlight(Duration.ZERO, 10).records()).isEmpty();

    assertThat(listener.storeCalls).containsExactly("inFlight");
  }
}
