package dev.once.spring.kafka;

import dev.once.OnceEvent;
import dev.once.OnceListener;
import dev.once.spring.Idempotent;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.listener.AbstractConsumerSeekAware;
import org.springframework.stereotype.Component;

/**
 * A Kafka consumer without a web server: a {@code @KafkaListener} that books each payment once,
 * however often its record is delivered.
 */
@SpringBootApplication
public class FakeLedgerConsumerApplication {

  public static final String TOPIC = "payments";

  /** The effect: bookings in a ledger (a plain bean, read by the test). */
  @Component
  public static class Ledger {
    private final AtomicInteger bookings = new AtomicInteger();
    private final CountDownLatch firstBooking = new CountDownLatch(1);

    void book() {
      bookings.incrementAndGet();
      firstBooking.countDown();
    }

    public int bookings() {
      return bookings.get();
    }

    public boolean awaitFirstBooking() throws InterruptedException {
      return firstBooking.await(60, TimeUnit.SECONDS);
    }
  }

  /** The example: the listener method itself is idempotent, keyed by the record's key. */
  @Component
  public static class PaymentsListener extends AbstractConsumerSeekAware {
    private final Ledger ledger;

    public PaymentsListener(Ledger ledger) {
      this.ledger = ledger;
    }

    @KafkaListener(id = "ledger", topics = TOPIC, groupId = "ledger")
    @Idempotent(key = "#record.key()", scope = "'ledger'", fingerprint = "#record.value()")
    public void on(ConsumerRecord<String, String> record) {
      ledger.book();
    }
  }

  /** Counts the engine's replays, so the test knows a duplicate delivery was handled. */
  @Component
  public static class Replays implements OnceListener {
    private final CountDownLatch replays = new CountDownLatch(2);

    @Override
    public void onEvent(OnceEvent event) {
      if (event instanceof OnceEvent.Replayed) {
        replays.countDown();
      }
    }

    public boolean awaitTwo() throws InterruptedException {
      return replays.await(60, TimeUnit.SECONDS);
    }
  }

  @Bean
  org.apache.kafka.clients.admin.NewTopic paymentsTopic() {
    return new org.apache.kafka.clients.admin.NewTopic(TOPIC, 1, (short) 1);
  }
}
