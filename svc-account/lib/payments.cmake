# Checkout, the payment webhook and the notification mailer (payments.c,
# mail.c) in the `acct` library; they speak HTTP and SMTP through libcurl.
target_sources(acct PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/lib/payments.c ${CMAKE_CURRENT_SOURCE_DIR}/lib/mail.c)
target_link_libraries(acct PUBLIC PkgConfig::CURL)
