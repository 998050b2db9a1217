package dev.once.spring;

import org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration;
import org.springframework.boot.autoconfigure.http.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.autoconfigure.jackson.JacksonAutoConfiguration;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.autoconfigure.jdbc.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.autoconfigure.web.servlet.DispatcherServletAutoConfiguration;
import org.springframework.boot.autoconfigure.web.servlet.WebMvcAutoConfiguration;
import org.springframework.boot.web.context.WebServerApplicationContext;
import org.springframework.boot.web.embedded.netty.NettyReactiveWebServerFactory;
import org.springframework.boot.web.embedded.netty.NettyWebServer;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The Boot classes the tests start or look at whose names differ between the lines, as Boot 3 names
 * them. Boot 4 moved them into its per-technology modules: src/boot4-test/java has its names.
 */
public final class BootLine {

  static final Class<?> DATA_SOURCE = DataSourceAutoConfiguration.class;
  static final Class<?> DATA_SOURCE_TRANSACTIONS =
      DataSourceTransactionManagerAutoConfiguration.class;
  static final Class<?> REDIS = RedisAutoConfiguration.class;
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
