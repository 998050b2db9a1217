package dev.once.spring;

import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.http.converter.autoconfigure.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.reactor.netty.NettyReactiveWebServerFactory;
import org.springframework.boot.reactor.netty.NettyWebServer;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The Boot classes the tests start or look at whose names differ between the lines, as Boot 4 names
 * them (it moved them into its per-technology modules); src/boot3-test/java has Boot 3's names.
 */
public final class BootLine {

  static final Class<?> DATA_SOURCE = DataSourceAutoConfiguration.class;
  static final Class<?> DATA_SOURCE_TRANSACTIONS =
      DataSourceTransactionManagerAutoConfiguration.class;
  static final Class<?> REDIS = DataRedisAutoConfiguration.class;
  static final Class<?> JACKSON = JacksonAutoConfiguration.class;

  /** Spring MVC with its DispatcherServlet and message converters. */
  static final Class<?>[] WEB_MVC = {
    WebMvcAutoConfiguration.class,
    DispatcherServletAutoConfiguration.class,
    HttpMessageConvertersAutoConfiguration.class
  };

  private BootLine() {}

  /** Whether the application's web server is Reactor Netty. */
  static boolean runsOnNetty(ApplicationContext app) {
    return ((WebServerApplicationContext) app).getWebServer() instanceof NettyWebServer;
  }

  /**
   * Reactor Netty for a reactive application; the starter's tests also have Tomcat on the class
   * path, which Spring Boot would prefer.
   */
  @Configuration(proxyBeanMethods = false)
  public static class NettyServer {
    @Bean
    NettyReactiveWebServerFactory nettyReactiveWebServerFactory() {
      return new NettyReactiveWebServerFactory();
    }
  }
}
