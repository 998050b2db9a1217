package dev.once.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.kafka.KafkaBroker;
import dev.once.spring.kafka.FakeLedgerConsumerApplication;
import dev.once.spring.kafka.FakeLedgerConsumerApplication.Ledger;
import dev.once.spring.kafka.FakeLedgerConsumerApplication.PaymentsListener;
import dev.once.spring.kafka.FakeLedgerConsumerApplication.Replays;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A {@code @KafkaListener} method with {@code @Idempotent}, on a real KRaft broker (once-kafka's
 * test fixture; on Boot 4 its Kafka 4 twin in src/boot4-test): a record delivered again after its
 * offset was rewound, and the same payment produced twice, book one entry in the ledger.
 */
@SpringBootTest(
    classes = FakeLedgerConsumerApplication.class,
    webEnvironment = SpringBootTest.WebEnvironment.NONE,
    properties = {
      "once.store.type=memory",
      "spring.kafka.consumer.auto-offset-reset=earliest",
      "spring.kafka.consumer.enable-auto-commit=false"
    })
@Timeout(120)
class KafkaListenerMethodTest {

  private static KafkaBroker broker;

  @Autowired KafkaTemplate<String, String> kafka;
  @Autowired PaymentsListener listener;
  @Autowired Ledger ledger;
  @Autowired Replays replays;

  @DynamicPropertySource
  static void broker(DynamicPropertyRegistry registry) throws Exception {
    broker = KafkaBroker.start();
    registry.add("spring.kafka.bootstrap-servers", broker::bootstrapServers);
  }

  @AfterAll
  static void stopBroker() throws Exception {
    if (broker != null) {
      broker.close();
    }
  }

  @Test
  void aRedeliveredRecordAndAProducerDuplicateBookOnce() throws Exception {
    kafka
        .send(FakeLedgerConsumerApplication.TOPIC, "payment-1", "{\"amount\":1250}")
        .get(60, TimeUnit.SECONDS);
    assertThat(ledger.awaitFirstBooking()).isTrue();

    // At-least-once delivery: the consumer reads the record again (a rebalance before its offset
    // was committed looks the same), and the producer's retry sends it a second time.
    listener.seekToBeginning();
    kafka
        .send(FakeLedgerConsumerApplication.TOPIC, "payment-1", "{\"amount\":1250}")
        .get(60, TimeUnit.SECONDS);

    assertThat(replays.awaitTwo()).as("both duplicates reached the listener").isTrue();
    assertThat(ledger.bookings()).isEqualTo(1);
  }
}
