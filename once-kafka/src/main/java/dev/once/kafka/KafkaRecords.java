package dev.once.kafka;

import dev.once.messaging.MessageReader;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/**
 * How once-messaging reads a Kafka record: headers as UTF-8 text (the last one of a name wins, as
 * Kafka's {@code lastHeader}), the raw value as the payload (a tombstone's is empty), and {@code
 * topic/partition/offset} as the record's id, which a redelivery of the same record keeps.
 */
public final class KafkaRecords implements MessageReader<ConsumerRecord<byte[], byte[]>> {

  /** The reader for {@code byte[]} records. */
  public static final KafkaRecords READER = new KafkaRecords();

  private static final byte[] EMPTY = new byte[0];

  private KafkaRecords() {}

  /**
   * {@code topic/partition/offset}: unique per record and kept by every redelivery of it, but a
   * producer that sends the same thing twice makes two records: set a key header for that.
   */
  @Override
  public Optional<String> messageId(ConsumerRecord<byte[], byte[]> record) {
    return Optional.of(record.topic() + "/" + record.partition() + "/" + record.offset());
  }

  @Override
  public Optional<String> header(ConsumerRecord<byte[], byte[]> record, String name) {
    Header h = record.headers().lastHeader(name);
    return h == null || h.value() == null
        ? Optional.empty()
        : Optional.of(new String(h.value(), StandardCharsets.UTF_8));
  }

  @Override
  public byte[] payload(ConsumerRecord<byte[], byte[]> record) {
    return record.value() == null ? EMPTY : record.value();
  }
}
