package dev.once.bench.messaging;

import dev.once.messaging.ConsumerStats;
import dev.once.messaging.MessageProcessor;
import dev.once.messaging.MessageReader;
import dev.once.sqs.SqsConsumer;
import dev.once.sqs.SqsMessages;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.elasticmq.rest.sqs.SQSRestServer;
import org.elasticmq.rest.sqs.SQSRestServerBuilder;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;

/** ElasticMQ started in this JVM on a loopback port, through the AWS SDK's SQS client. */
final class SqsBroker implements Broker<Message> {

  private final SQSRestServer server;
  private final SqsClient sqs;

  SqsBroker() {
    server = SQSRestServerBuilder.withInterface("127.0.0.1").withDynamicPort().start();
    int port = server.waitUntilStarted().localAddress().getPort();
    sqs =
        SqsClient.builder()
            .endpointOverride(URI.create("http://127.0.0.1:" + port))
            .region(Region.US_EAST_1)
            .credentialsProvider(
                StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local")))
            .build();
  }

  @Override
  public MessageReader<Message> reader() {
    return SqsMessages.READER;
  }

  @Override
  public String newQueue() {
    String name = "once-bench-" + UUID.randomUUID();
    return sqs.createQueue(r -> r.queueName(name)).queueUrl();
  }

  @Override
  public void publish(String queue, String prefix, int count) {
    for (int i = 0; i < count; i += 10) {
      List<SendMessageBatchRequestEntry> batch = new ArrayList<>();
      for (int j = i; j < Math.min(count, i + 10); j++) {
        batch.add(
            SendMessageBatchRequestEntry.builder()
                .id("m" + j)
                .messageBody("{\"amount\":1000,\"currency\":\"EUR\"}")
                .messageAttributes(
                    Map.of(
                        "Idempotency-Key",
                        MessageAttributeValue.builder()
                            .dataType("String")
                            .stringValue(prefix + "-" + j)
                            .build()))
                .build());
      }
      sqs.sendMessageBatch(r -> r.queueUrl(queue).entries(batch));
    }
  }

  @Override
  public Consumers consume(String queue, MessageProcessor<Message> processor, int consumers) {
    SqsConsumer consumer =
        SqsConsumer.builder(sqs, queue, processor)
            .workers(consumers)
            .receiveWait(Duration.ofSeconds(1))
            .start();
    return new Consumers() {
      @Override
      public java.util.function.Supplier<List<ConsumerStats>> stats() {
        return () -> List.of(consumer.stats());
      }

      @Override
      public void close() {
        consumer.close();
      }
    };
  }

  @Override
  public void deleteQueue(String queue) {
    sqs.deleteQueue(r -> r.queueUrl(queue));
  }

  @Override
  public void close() {
    sqs.close();
    server.stopAndWait();
  }
}
