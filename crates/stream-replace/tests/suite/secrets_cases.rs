const SECRET_CASES: &[Case] = &[
    Case {
        id: "aws_sts_key_id",
        pos: &[
            "|ABIAMN18DI4C6K1P0MBO|",
            "|ACCAJIN4YXPBBS88H6CA|",
        ],
        neg: &[
            "ABIA39UU11MDQMY17JD",
            "abiaGEI89CD0NXF8UG0C",
            "XABIA03ECWGPFIRW1W74Y",
            "ABIACCJA7H4CLCB1DS1KE",
        ],
    },
    Case {
        id: "google_oauth_client_secret",
        pos: &[
            "|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|",
        ],
        neg: &[
            "GOCSPX-BGH9NcPTOJ1mgYZnzUsF",
            "gocspx-g6pEuJ7sCBJZPUEMRUbeNqfPAh6t",
        ],
    },
    Case {
        id: "google_oauth_access_token",
        pos: &[
            "|ya29.MNCbbMSREVVHGx_O1arVdHBmh1Y4-pgjl8GhzHGn|",
            "|ya29.a0LmSOOkQgtasmBmtUwNdSG1AwgG1A3Dv6rmwl8zz7EIYrp9sFwssWHeZf8wp3|",
        ],
        neg: &[
            "ya29.MxaQ9mQwGo",
            "ya30.zfpEX0dORJsGTwjO7uqkWI0fDlxndGceTOs1cvce",
        ],
    },
    Case {
        id: "azure_storage_key",
        pos: &[
            "DefaultEndpointsProtocol=https;AccountName=acct;|AccountKey=aUKjJdYENif6PWt042ZjbMQym+I5EmSu/utCr1DBuUsueRHt0KSBd8/USNwygGn1l/yaH5jUfTTvDt/NUutqx+==|;EndpointSuffix=core.windows.net",
        ],
        neg: &[
            "AccountKey=jk2o1/knjxj8+tkHtzhXeb9ZIKuTY9rH/gem2VEw==",
            "AccountKey=<your key>",
        ],
    },
    Case {
        id: "digitalocean_token",
        pos: &[
            "|dop_v1_611aa6bcd9122ab2e080838eb9e9ea98598f0b32b121c7f1d2d77f9f39520309|",
            "|doo_v1_44a906519e76695233d01db5890c94db0b1afde94638fb704412bd4448924ac6|",
            "|dor_v1_a65a4cfb2c8210c961a3e97a11596fb0ac8f3e9c79ad7204fbf792836061bce1|",
        ],
        neg: &[
            "dop_v1_dffaf689e44e45f1673347fdfbd74b155e1e5cd4b6ca98193ce76e1d649472c",
            "dop_v2_efcb32c4a0fc594b802cd898eaeca2dcb6e9ea8fd6cb2e0ccea9ba1c5cf76687",
            "dox_v1_c1b569ed0e8a0e410c1ef23e6d25ebc6b23d81ec4148a27b13014c66266f009c",
        ],
    },
    Case {
        id: "alibaba_access_key_id",
        pos: &[
            "|LTAI5E5LBJPJR6vpIxXq|",
            "|LTAIMAKU2X4fKmI5T2joXvi8|",
            "|LTAI9oTSsE7CIKT9|",
        ],
        neg: &[
            "LTAIwYe2OsHQ",
            "ltaiyYQwpdhcztIYueOJ",
        ],
    },
    Case {
        id: "databricks_token",
        pos: &[
            "|dapif71d40ca551f506cb004ceb926c0ff3e|",
            "|dapia585f35dd4f6ecfbd7ef74827f0489ee-2|",
        ],
        neg: &[
            "dapib56fe355a25c24cab8c324d5449fcfd",
            "dapiB9668915C6152CA2BA18B7E4E774BBDF",
            "xdapi468d2e99e63a0f7452e88cdb27b7b314",
        ],
    },
    Case {
        id: "hashicorp_vault_token",
        pos: &[
            "|hvs.qSA4AL3lit6h79PMMzsP2H3m103iTTblLfDnhcMhfF2GPWhC2Gj09UAAco9jWGkytWPTZ32TCYVFs4GGGXJGTiJwn2|",
            "|hvb.jpWl6AsaDpolFquJJFY4RjvjF31zcTZvw9g9WUR5ds4dkFSRb5B3Ge6SgFXxOWDbquxi9qstQnbeljiPMFfR6QNxb7NbkOW7SgG7hnfEUY92Rk3oMGLbd4UN|",
            "|hvr.Bhv9XOi7Cof20_oaUnfJp4cu|",
        ],
        neg: &[
            "hvs.3YRs0lNbck",
            "hvx.bLgjq5I0JT4fUieEGOhuXeOvYOV1nyvQeYG3wj8ziJEwJNjrLcvW6L8lH9CM0pv0vSWkSUV2Ilignni1ffLbRavT3P",
        ],
    },
    Case {
        id: "terraform_cloud_token",
        pos: &[
            "|xrA5qg1saRCcNB.atlasv1.iYdOoJfO_5fejZsvZ9eFHIu0paUI7fk-lgwZvSV1pTQZWOtouwjT-gi3Uq_o3IJ2efX|",
        ],
        neg: &[
            "NwI5sdFVTvqGOg.atlasv1.RmdgNi1q13mUZRzgEQtu",
            "HzYwu6sQKXfcWO.atlasv2.6X15Zvh8pmxO3v8HTmFZaVf5oOwa8IGVY8nqADrXaqFriakT1wZNqcYLr8fHx7EDbJC",
        ],
    },
    Case {
        id: "doppler_token",
        pos: &[
            "|dp.pt.T9R8WzTzWMO1nO2zCkW4Lh6N2XQu6UVgi6ivPBgygAt|",
            "|dp.st.nv3sfgBFJYiKi7ygIf2mZQ9dKOrVTpRDh2etNA1o|",
            "|dp.scim.vk9Q3bRuaotJCoXyg3yEkJIH8vkbTdH7wPCqiqufCyB|",
        ],
        neg: &[
            "dp.pt.jVuGQUBHzxneoltFGbQJ",
            "dp.xx.j9jR2ZQceAzZxGHjYXq7xds9v8jev9IVzf4Dxowm1Gk",
        ],
    },
    Case {
        id: "pulumi_token",
        pos: &[
            "|pul-c0dd7e8581a1418f72889db285a70bc9cf1d5917|",
        ],
        neg: &[
            "pul-a4adf5b257aa0b7ce6a19570fdf2cdc10d755c6",
            "pul-68f42778f1c31e937ba71100108236b395d62a17c",
        ],
    },
    Case {
        id: "grafana_token",
        pos: &[
            "|glsa_FlcHZGhTGmoDi3D7hosxLAKBzgPcCNl1_97102323|",
            "|glc_qASTBmpdBCv/YoKWclYwhI0TFN/xJesN6+RsNaiX07v7EY3T=|",
        ],
        neg: &[
            "glsa_6z1bLRA5pcVIQUzGcQPfsrFE9tvzKCB0",
            "glc_TFyuUHtq8H",
        ],
    },
    Case {
        id: "new_relic_key",
        pos: &[
            "|NRAK-HRMZPT4UZBEEGP4UVOQWWLPPIAW|",
            "|NRII-zm6znldLw8XGkORPx0sXdEZAJd6XR3vG|",
            "|NRJS-cf7e1313bcd5e8fc2a7785d608a|",
        ],
        neg: &[
            "NRAK-6SLBEX1ET4",
            "NRXX-CGW9QTP0ZOS3ZDKTYZ2JEKAMPAL",
        ],
    },
    Case {
        id: "sentry_token",
        pos: &[
            "|sntrys_eyJfzzVQZ4rwGj9MbS3TEDDapRLv6aWcd/b0PCw/Zlh73P5ky0IRNGez8H3rc79CT+pehaAwXFj0hR1WX40|",
            "|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|",
        ],
        neg: &[
            "sntryu_d8e06a577505b4d4ae0235b00d26e8f4",
            "sntrys_Bjp2mxjPAdi48JAbpVjW7RVkSnvemN19TqfxQR0N",
        ],
    },
    Case {
        id: "gitlab_token",
        pos: &[
            "|glpat-6MyhLuRbvJCOkzx6UIuA|",
            "|gldt-oqm48x0JyPtGcxou97vj|",
            "|glrt-cRYVDXrN508QycPd4t1G.01.zo18njb4f|",
            "|gloas-ca0844094685cd1630010b8f6379a90b4043c3246651008bc78d4595b73986b1|",
            "|glcbt-MZ7Nnj6JkknODkygwgwu7G5Y|",
        ],
        neg: &[
            "glpat-bIrHwFPiLH",
            "glpet-dOWFEyJVXpwyhbY55H6k",
            "GLPAT-hjbYR1Z82QrQyiFOlvNV",
        ],
    },
    Case {
        id: "gitlab_trigger_token",
        pos: &[
            "|glptt-8966db74f9243e1f474ecf4ad6fb3d894b30fd28|",
            "|GR1348941MpjdjyI77h_wL4zgSomA|",
        ],
        neg: &[
            "glptt-81b416463b301b4f2080f79ae9b31ff48b9b813",
            "GR1348942wQTQPBlCcRUr42rpRIkY",
        ],
    },
    Case {
        id: "atlassian_token",
        pos: &[
            "|ATBBuKTtglWVZza4twVci971qtdAFgA4kMTJ|",
            "|ATATT3U0veqreqp_h0xIsphThXeghkN1cBvRLAj8NF4v8bPFxXAC5pCgXTlr92MU1EyoxaFiwgsZRufA9JgK3vi2ZnKGwwIaAKrzrKwsehSJmCRrKGkp3d4vbx8Eln1gCfu89O4aWG9g3rVOU9S5VgQXxlmXN6vOD7Br3AnxvG7f9z0mEDIB345m1QnPJQHg|",
        ],
        neg: &[
            "ATBBWF0hKzyxI76FkebVUA5L",
            "ATATT3PlxxLzAxYxmkuKN4WLxuR580T4E2DWaQI5bLoj94LHEaDmsebLlDY2zyXHW0bei21Qrk5z4O72dHzLHKv7evC2XVQh8pB8vRk86R",
        ],
    },
    Case {
        id: "npm_token",
        pos: &[
            "|npm_RHyFiGLFkuhDDo3gDgMTjLI9oZXUenyXNZxw|",
        ],
        neg: &[
            "npm_4gIfbKIU9gNFUdEwwXQEXbODXeXMcf5vtWo",
            "npm_ab6gYEUY4tgU6AqRPJVTOU1s7jf30wZKhls2h",
            "NPM_UcMt7ypYTbgUeHBRVxTlozS52uauvA9M7JpK",
        ],
    },
    Case {
        id: "pypi_token",
        pos: &[
            "|pypi-AgEIcHlwaS5vcmcQrGXWcf6njMsKN3fItcyzsllbpc1tG4QoJYpzvCXR-nTVtFAWAA56RFqHuVj0VEcK6NqKJjfYGwDcbPrrm22nOY1-DMwV_PGUFQL6ij-j88bda16ezPIbaEWesI4tP3KZvUwnkuQR2NCXA8yQJesj9|",
        ],
        neg: &[
            "pypi-AgEIcHlwaS5vcmcllQ3oK07Ry1nE5RBX8QN",
            "pypi-AgENdGVzdC5weXBpKlePR8ZIbmJOnYeaenyt0uD21OlwORdubSEx4sYvPM951YUUsYX3T9KhI68OJvZJdXoCQhPkFo9UjytBP7C10uoTlYlQmiciQCOk",
        ],
    },
    Case {
        id: "rubygems_key",
        pos: &[
            "|rubygems_397431819d997de19abac8b9ceb2c9867e49874ba8fea2f8|",
        ],
        neg: &[
            "rubygems_1e11a9a8a0ab70c38db5e98e619fb9d62b23eac4ff3576f",
            "rubygems_2DA529139651EC70214C80BA1FD0B3D45AD2E58734D584F4",
        ],
    },
    Case {
        id: "nuget_key",
        pos: &[
            "|oy28ruvcjb0fqkv70p45cbwpizrdy2cpso3amfw4zzzfh9|",
        ],
        neg: &[
            "oy272dwe03z3y3k1d4fxoq12a86wiglko2md41nyfetyq",
            "oy3yisjt7abvj3ck9aara84sf4e139220usaey3r9sss77",
        ],
    },
    Case {
        id: "docker_hub_token",
        pos: &[
            "|dckr_pat_-6-vJIfZKmrfhOiQqLpRDIqBSca|",
            "|dckr_oat_CkMA3KmCgfmibr7LzvpfEGlzfYQNBu49|",
        ],
        neg: &[
            "dckr_pat_HrJc4Mm3Il0PYCP8nGVT",
            "dckr_xxx_HKzpGOU16tAO51Qbq86VeVtZAMQ",
        ],
    },
    Case {
        id: "postman_key",
        pos: &[
            "|PMAK-9b4f771faa57ce7da379253d-2c7cd8f90248e5523b180169801047c5f4|",
        ],
        neg: &[
            "PMAK-daadcb87d94270f8a256e5a9-c02ae32048be0448df35",
            "PMAK-J0AZWZJNBC94EDNWAR1C7XKL-U3IAJJOCFMWMXLXL8GP61ICNGTXYY2T0X2",
        ],
    },
    Case {
        id: "shopify_token",
        pos: &[
            "|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|",
            "|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|",
            "|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|",
        ],
        neg: &[
            "shpat_11d7a7388ad073903d5a71b537a60df",
            "shpxx_1ad38c12cab0f00e73e39bc5c0e6e758",
        ],
    },
    Case {
        id: "linear_key",
        pos: &[
            "|lin_api_JOBbyDyXLLG5tle5hrjUeu56Ncbq1UECEgQoLdiU|",
            "|lin_oauth_G49rXrtFlKwn7WreTbWq8mTkjFQn1vnCMyT6qZKi|",
        ],
        neg: &[
            "lin_api_fB1T9x0nIPOU3qud6M51glrVk5Ef4uSMfZihGzp",
            "lin_key_2f8SeDBnMVaCi1pISxF8HMxnRR8QVTUIk0x9I8s5",
        ],
    },
    Case {
        id: "notion_token",
        pos: &[
            "|ntn_sjCY5yT4Gl1Jq9dsHASJvHjNUYKwDzwhl2eUTBruD0GMFf|",
            "|secret_QeuLOnNAZOORYcIKpkEfdIvBgSLFi0XOqUjza4k8RCk|",
        ],
        neg: &[
            "ntn_n3UeYGMbUgvnpvDPjV9L1t3JQ56zk3",
            "secret_QuDDoHisYamNzKHhehe5GjFAQTaDuwvmo9tFgu7rfh",
        ],
    },
    Case {
        id: "figma_token",
        pos: &[
            "|figd_MWfnXUiRVMAo1zpUOXySgBoS0p1IPvTYLyVfdSoa|",
            "|figo_6WH1eNQdyuFvEPFOu0pzpxHALGTEoznMUBQN9vbiqYY|",
        ],
        neg: &[
            "figd_SJt5xUouXJXxuddENlIMpU2ypsjAQj",
            "figx_6HqcqwgGaFNXunmllCD3CDogkiuq7PV2WmnxLOJ4",
        ],
    },
    Case {
        id: "airtable_token",
        pos: &[
            "|patnqWVZ3CCjGynxh.8ec325a317a0a6285a8d12c286cd3ca20690966164ef4e866e5de5b6749d659e|",
        ],
        neg: &[
            "patL3ff0Qh5B6L1jP.0b370a302bc4a93166e1478bb011101d45b9136bef6a73355a9b2d822d98aeb",
            "patSUBHwZ2m6aPNq.871848db84790e5350b8f6afcad83af82c415b143d22af1e88e48d00891ce166",
        ],
    },
    Case {
        id: "stripe_webhook_secret",
        pos: &[
            "|whsec_YxzgmdNUpasmvMt9i5M7f0wpaTIayNCx|",
        ],
        neg: &[
            "whsec_CUVFKgqV7HmBIZqHiN0Akrw2uiTA8Zo",
            "whsec-nvy0d0NfO3tmsCMntu0xScRaiuii7PVw",
        ],
    },
    Case {
        id: "square_token",
        pos: &[
            "|sq0atp-i-ej8Y33HWrZP7nIn8WmtL|",
            "|sq0csp-fdeOTPiuDokDXqc5khusCiY68RTasEjojF05t3Q9u6v|",
        ],
        neg: &[
            "sq0atp-AjqJ7zr2PNjVP3J0lQOnC",
            "sq0xxx-nVeslx3flbyTOvz5l2GNRV",
        ],
    },
    Case {
        id: "braintree_token",
        pos: &[
            "|access_token$production$p1auan3kupu3ygjm$3f53478f2dfe36b20c2047151bedff11|",
            "|access_token$sandbox$8z6lv4gt3h03leba$9f3afe7b1c45cb9619d9b654b2561f37|",
        ],
        neg: &[
            "access_token$production$8ktv38t5wsolesws$aa29a40fdfed6dc0c85795bd3c9107a",
            "access_token$staging$3wtg4yh8zawudh3y$d5cf0e86720da85f8ca0d6ab3bfb77f9",
        ],
    },
    Case {
        id: "razorpay_key",
        pos: &[
            "|rzp_live_lQdOJ4cug1DwOA|",
        ],
        neg: &[
            "rzp_test_waMCyrfWHkCOvL",
            "rzp_live_O2GRNIATNAuoj",
        ],
    },
    Case {
        id: "flutterwave_key",
        pos: &[
            "|FLWSECK-01b51eabedd0657a09ff9f3456ce9a03-X|",
            "|FLWPUBK-ad345e72de49399a0c34e1fde59ffc7b-X|",
        ],
        neg: &[
            "FLWSECK_TEST-f3ed563ac6b44ac74a3902aad0a07d57-X",
            "FLWSECK-7a73b7a760dfc55e5efc4a95cd647f5-X",
        ],
    },
    Case {
        id: "plaid_token",
        pos: &[
            "|access-production-10b74583-f45c-4eef-4139-b79cd202cab1|",
            "|access-sandbox-f91b35a2-b77d-46a7-c8e4-4af4cd3643e9|",
        ],
        neg: &[
            "access-staging-2538c69a-eb01-631b-a0c8-40557f984f5e",
            "access-production-56e9cd43-7a9f",
        ],
    },
    Case {
        id: "slack_app_token",
        pos: &[
            "|xapp-1-A6ODZA4MNL7-8562766960725-6c05cefc7fca3c17e2badbabf86e4ef3c944177814e83e7b8977629ffb8df18a|",
        ],
        neg: &[
            "xapp-1-AHOJVLN53IM-4508627085933",
            "xapp-x-AEF00ONQJNT-8710412767281-49062bd506cace6bbb342c4c91dc78f275f3eaacc311cbb21001ee2306319bbd",
        ],
    },
    Case {
        id: "slack_webhook",
        pos: &[
            "|https://hooks.slack.com/services/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|",
        ],
        neg: &[
            "https://hooks.slack.com/services/",
            "https://hooks.example.com/services/TA7E27QRS/B0JF67JVUM1/wE7amMTjWttzL1gvxKioiVi1",
        ],
    },
    Case {
        id: "discord_webhook",
        pos: &[
            "|https://discord.com/api/webhooks/449323999758323618/q0pTC2PBrjAsypXJAI3ZKcrhrLCUsb19Rn4DuHkVAjRGY0i2ByH1_3RNWXQR3W1V05rx|",
            "|https://discordapp.com/api/webhooks/7806614314365346482/uuVRiXG7QUqRl2EQgYXH3PMexo0Us7wXSxehW54qvzgqbY3VlGQEz5PFYqsDriXUcY5a|",
        ],
        neg: &[
            "https://discord.com/api/webhooks/135662048390691172",
            "https://discord.com/api/webhooks/453601249175973696/1hqTNXLx6L1wdPNxSZzH",
        ],
    },
    Case {
        id: "discord_bot_token",
        pos: &[
            "|MTaIvXUHJOtWKFebjqhmVMXTDL.kbdZkX.QKTB93ruwaTjk85LH2-84muw-6Q0dgbFhxN7yQ|",
            "|NZJPjFwTSQ7lCfHoBxa1eUss.iHqgtM.Vrj59dI0BrNav4pZMvazUMi0YJ8|",
        ],
        neg: &[
            "MTlYZxA8bMdnUJ1fStzm9ebEGD.AMdkEJ",
            "XTiBoXRk097T2K4GDsNRangRUC.FILch8.PVPqYOzDbcTYw9z4QTX5lsV7qHYWyAkZydrY7s",
        ],
    },
    Case {
        id: "telegram_bot_token",
        pos: &[
            "|8226221581:AAVkw7L7yDpjGVdr57Qa-GKLGrR66-LkyE7|",
            "|156501985:AAYrsnj1JYByO024mGSijbdhaU09l1wjq6O|",
        ],
        neg: &[
            "1170540054:AB11rbnghG18dS1xwXWhd2jjvPE6Z3xazZQ",
            "3142515635:AAYH2Pb45Uglxp2ffhrFXB",
        ],
    },
    Case {
        id: "twilio_api_key",
        pos: &[
            "|SKe1eb103e9c3fe152c8d69f2f997a1f82|",
        ],
        neg: &[
            "SK9cf18c1f0230997dc41fd0a5e328bd9",
            "SK7E296B6B26B5E331EF473945A746F248",
            "AC153bb17a43f9dcad5e123739cc7a3a53",
        ],
    },
    Case {
        id: "sendgrid_key",
        pos: &[
            "|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|",
        ],
        neg: &[
            "SG.JKIWHU2NgqdUScBKuBSnHj.rrzWzxN2PWBkl3nqrQ9l",
            "SG.1lQ1DY2UcZ.weBPJM4CesAVrdEmyUpvqReHytOwxDYUqI2ojSYDU3w",
        ],
    },
    Case {
        id: "mailgun_key",
        pos: &[
            "|key-92b4eb782f2d1381aa02d6d434b342f4|",
        ],
        neg: &[
            "key-2eb9fbe3501f596cc10d373ec3dd2e0",
            "key-ABF349649B084623052AA17558775B0E",
        ],
    },
    Case {
        id: "mailchimp_key",
        pos: &[
            "|e2d6e3b69b7224a9a799943dad35c872-us27|",
            "|e1fb26a158fbf0d83bcf2835037a86b2-us6|",
        ],
        neg: &[
            "6cad04e11c344a2be8508e7779b105ef-eu1",
            "faaf43188e88efb323d4c7564fa8e77-us6",
        ],
    },
    Case {
        id: "openrouter_key",
        pos: &[
            "|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|",
        ],
        neg: &[
            "sk-or-v1-ebdf9b476768526ac021",
            "sk-or-v2-3EC1C52AEAFE635FC9261F54046FC7808F18F40281EA5FB9732F8A1FA503A1A7",
        ],
    },
    Case {
        id: "huggingface_token",
        pos: &[
            "|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|",
        ],
        neg: &[
            "hf_jJBrdfIItGxpmgAbzGSluHoIdHJwqJtdE",
            "hf_XuYmGbimvZYrZwmLcItwddwTvWVDVIGqyen",
            "HF_aJvGaifwHDuHbIxLcIvBdUcqZtTWgUjFGY",
        ],
    },
    Case {
        id: "groq_key",
        pos: &[
            "|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|",
        ],
        neg: &[
            "gsk_jD9MntZFN8ShuSGclEyu25dD5CYFCKdrMdTSDv34eFwgT9zyvVr",
            "gsk_TitYurL7h5nmq0TM35gDSIJMxmXqA5c9awOxqhVmc4gqTUDmVQ4mA",
        ],
    },
    Case {
        id: "replicate_token",
        pos: &[
            "|r8_a4Yplg0MN32sjRiRejLsN4PV4HIQU4EYg15JZ|",
        ],
        neg: &[
            "r8_LXpCjFjkoSzgMGCtr3OlyBpjvDoVLBoRR42U",
            "r9_zHcbK8q38YNZiY2h0GRoX94IiQYYslgdTmYef",
        ],
    },
    Case {
        id: "perplexity_key",
        pos: &[
            "|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|",
        ],
        neg: &[
            "pplx-6CkNCaeFoiHPgBq3KplHwwwnhaW9q8aEOzFID3dEb6ACNwK",
            "pplx_kOUgbPzLccK40LiMqEkAyL6Bk0sEfyU9Gw5GCmQSY4uDdLDQ",
        ],
    },
    Case {
        id: "xai_key",
        pos: &[
            "|xai-ZAIFNsTi3NSzuSwKoKY04SSmUDD619NzIT00vWJD9K7xV0Q6AHV2RqwPxrVSfFyETyVZN6jvI2QKiabN|",
        ],
        neg: &[
            "xai-tDj95PRABmZp1ZGH7bbJxbOJsWayR12kfoHoA48HYMnB1Ap7uxX9f2jSDZ9djSoBtyAOUr3C6Iz66GN",
            "xai-eKWA3vXc68smPRjEQ0N7D0LIWEWj7qD9vOTtdpqL",
        ],
    },
    Case {
        id: "langsmith_key",
        pos: &[
            "|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|",
            "|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|",
        ],
        neg: &[
            "lsv2_pt_b08e758401ad0af4ed61f7f7adf7d1cc",
            "lsv1_pt_a7af9ea501cacdf6de60b294e5c8bdfc_02ef981f3a",
        ],
    },
    Case {
        id: "tavily_key",
        pos: &[
            "|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|",
            "|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|",
        ],
        neg: &[
            "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",
            "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",
        ],
    },
    Case {
        id: "pinecone_key",
        pos: &[
            "|pcsk_JcK5DB_t72ZaAm8aUmMr8T1yDtB6glNWuW01vWsjNdDV9pw3vDEPvuf4iEZ86iArIra34moz|",
        ],
        neg: &[
            "pcsk_IVA0cT_v8rybY7OdbMm1NWRX1crBSbqANxxfR",
            "pcsk-xyKmFE_HwZrAhHczqhSVQlIpoypufiI3FhKdVCMtqTSL2dSLCPMwQfNc0vORtlutOE2JYfbu",
        ],
    },
    Case {
        id: "planetscale_token",
        pos: &[
            "|pscale_tkn_mp2knmdunTXLFNBiu1kkwWz1dRMVjSCowaDVm1Qnrs1|",
            "|pscale_pw_h92XKJspdLUQvXwmXOTIXXI6gkPPZvpdTXpAV4nXMYk|",
            "|pscale_oauth_JWqaxhy67t2zIs3E3SZF4iJFmhCP54FZ|",
        ],
        neg: &[
            "pscale_tkn_CCA1zxldCS7dBIy8r2Jw",
            "pscale_key_OvrqHULUAW9ZFFxELvzmZthx3CdaHq2CT13D2ngXhZd",
        ],
    },
    Case {
        id: "supabase_key",
        pos: &[
            "|sbp_7699670526dabe366416e9723475d7dd3227aa02|",
            "|sb_secret_ZHZv5R9J5p_dtjXVUYYfUgAWYy89QY0|",
        ],
        neg: &[
            "sbp_b3dbccee3f926360e2dcda31ebacc6deb8d29fc",
            "sb_publishable_rSPwJ8TR7Em0xL5z7QSwpxvmD9z1ZRd",
        ],
    },
    Case {
        id: "age_secret_key",
        pos: &[
            "|AGE-SECRET-KEY-1Z2FLNKLTERC7NWTWC9DEA4YK5PKZL2XCRYT2KH2X294A38S5QVKZA5MQKT|",
        ],
        neg: &[
            "AGE-SECRET-KEY-1RGESGN8VXMETRR2CZ5FEAGVT2JS08XFWKTG700FM02GQYW0PHW639XX6C",
            "AGE-PUBLIC-KEY-14YS0YTR6AP4A57E0ZEE9Q3YRQSUDVS99427NGHTZEUNTLD7AHWFLM2NJGG",
        ],
    },
    Case {
        id: "onepassword_token",
        pos: &[
            "|ops_eyJ2rjxRchN3aTJN41BELF9GRDhxOgF9YrRefqDW1T4NVQZVFLlkkPEeapAxnVDbu9PidpBwRwtyrpcpBZ4g33TcV+LeNf/bvIRp8VdA0bn5DRAhA9h2ooQCgfR9FxvqL3jgJ+oQzTFaIRFaIynaiZ+1j|",
        ],
        neg: &[
            "ops_eyJPURf2tErCwN7ETzRaBJsMrp1ktTF93ZOyBFwIEyZW2mrd5C4CM",
            "ops_MgTkefEyf1y2HAnzAKTH60mJ060HyKKnMVU88wkntQuVKch1jYpFYPBdXiTxboh1MRtScBfidWAn5MVIG3qtDat9gR8mRSmmZoT2l6p8bPgbjGwGf9G0kCNjUqyzD4bNpCncb5AK9CJVQc9HEkjuBZ",
        ],
    },
    Case {
        id: "mapbox_secret_token",
        pos: &[
            "|sk.eyJjvCT9VaxiUv2d_azXo-DcoweWy5XSL94zZnhUfAR.ltASmZxYECmJJN8O9TPV0i|",
        ],
        neg: &[
            "pk.eyJ8a6soIq7xe8RAFoWav2LX75l9BWaoFIvTXS3yGq7.rAZM3nb2LvwTurWVs7xgyO",
            "sk.eyJgw2vsiPD8E.jUvCGdyHs30Rh5YwnEoyRn",
        ],
    },
    Case {
        id: "facebook_access_token",
        pos: &[
            "|EAABDX6uJyO6qPxC4M7L3mlKEjam7UVA5OMM5dygJetiTe46qQrw5HpgcnFBIjQNhjA7zh8DcZVLGCmuVWm2I7gKIZcHmF6qY1k1C5fVp5hkP7zKVXwLOjIDquE|",
            "|EAACEdEose0cBAAPaEpi4Q1xTBTpSwqNn6VzQwtJacRFh4tUJnOcs8qbglg8yQF9XNqSnNWiRw0iftgEo6Uq9x1ZMXlG6SLiQEkTDtuF|",
        ],
        neg: &[
            "EAA8rbV4SW5W9PZiIZDb9YuQHD65FasOmJnWTERIgMwaxJMzYTnwa7L2WQKrMZn",
            "EABlRE9gqy8QuitsEseELnc436Y3jRvY6CEQHqLnXCpf5Cq64fPYSHeSQxfEhp3aHyPeCGFkNtdJUQaF7dG85jjWlNYYDxCyDLRhZJMO5LFSzCfSZHcOfWmhWOF",
        ],
    },
    Case {
        id: "shippo_token",
        pos: &[
            "|shippo_live_1c3784e05b65fe4043747cb42cdec5e43580ad36|",
        ],
        neg: &[
            "shippo_test_08643a843c99af649ac0c43c35dad2ffa68702a3",
            "shippo_live_6cbbbf402ba18bde12393a7184213017d405765",
        ],
    },
    Case {
        id: "easypost_key",
        pos: &[
            "|EZAKhUCu7jaCJzQcTEN7BpDjRZnIw0y1ulhiuXu38SmyTi5UA1kLI1L0Yy|",
            "|EZTK7qkbfYc2kLx6FxAKTcDae4ihw7JLK4BownKGyS6noXiINBgHWrKbqz|",
        ],
        neg: &[
            "EZAKAUP8QLYiU4pph4NBsKjEN2ACKJ9RqmG5zW8pYAgafZtjjgY6aWGH2",
            "EZXKFL3hfPxSb7QJyyioeYDiBTne7FECbEKki4ZTxDP3J0GtGw3bZv1pS8",
        ],
    },
    Case {
        id: "dropbox_token",
        pos: &[
            "|sl.T7ELlTp7uinhjOr0o_hX7vp19LVmSB-QsWQcEARjy4aVmwE-u8OqaJ96AI_YWCEBx9YbOxngCcq12p-JPbf4ofsnIVU71jtulp99oFHvjglsuykpZpbf_dseTlilG2nseM8bsP4SVG|",
        ],
        neg: &[
            "sl.GJhkgkJY1FeVbDCOgktH2AqPMCSeWzYXO4h3bVZjC6X8lqEHSCV6qmqSZpuTVAlYTv44Rs3vMOaTCFiM80GW8aIEIvYJTtQgVsDY",
            "sm.o5TDyRegymmYYiDjGJb0CgPWDu9QMuLKqhKsfzQHjucKY8oO3APCvVKdWziQmZOtrp0G9iH6rj2Ansn57HFIYZobmuvABtKklVNNlukASYl3mzuq8BO2vP5kqjvaY7TIi9iZfxtTKD",
        ],
    },
    Case {
        id: "url_password",
        pos: &[
            "postgres://admin:|S3cr3tbxHbxz|@db.example.com/app",
            "redis://:|jS7v0cjhbXPR|@cache:6379",
            "https://ann.lee:|p%40ss3795|@git.example.org/x.git",
            "mongodb+srv://svc:|yhJOOsj7PLv5Lv9REBp7|@cluster0.example.net",
        ],
        neg: &[
            "https://example.com:8080/a@b",
            "postgres://db.example.com:5432/app",
            "user:pass@host",
        ],
    },
    Case {
        id: "auth_header",
        pos: &[
            "Authorization: Bearer |KMLS7khohOtzAY6xzu0YQvfjKH6CnHWiZia_Zc6c|",
            "authorization: Basic |WhVz0t2nquPwV9o0xPad7bx6==|",
            r#""Authorization": "Token |1PMWmEta2fLZevQnNnrTZeuavSA1IcdABWrLMoAO|""#,
            "Proxy-Authorization: |bHs58mD2kHgbx52TWv2GOIXbjNek8yDP|",
            "-H 'Authorization: Bearer |sVIOa3ekVEeK3099|'",
        ],
        neg: &[
            "Authorization: required",
            "authorization: Bearer $TOKEN",
            "Authorization: Bearer <token>",
            "authorization is required",
        ],
    },
    Case {
        id: "cookie_header",
        pos: &[
            "Cookie: |session=15023a087598d3d6a62f45c3e2692d39; theme=dark|",
            "set-cookie: |sid=L36lpKonG3tes1wigdXsTkSj; Path=/; HttpOnly|",
            r#""Cookie": "|_ga=GA1.2.305921484|""#,
        ],
        neg: &[
            "Cookie: none",
            "the cookie: it was chocolate",
            "cookie jar",
        ],
    },
    Case {
        id: "bearer_token",
        pos: &[
            "Bearer |6YUpUepEsATHwepEGWdmLR4iIt15qd33Me5OzutA|",
            "bearer |YeLRAnFkbV6oOEQO2YGV|",
            "BEARER |fnh1Dm5AEBpiPOLAiwrVydQq+nIgCr==|",
        ],
        neg: &[
            "Bearer tokens are short-lived",
            "Bearer bx1Ph5ZLiU",
            "bearer $TOKEN",
        ],
    },
    Case {
        id: "credential_assignment",
        pos: &[
            "password=|XkQzPwLmRtVb|",
            "password=|hunter2EwLkL4|",
            "DB_PASSWORD=|tEny69ksyF76|",
            "export AWS_SECRET_ACCESS_KEY=|jVuATtL/KTqrOOaCpIwJjjBLS5hE+zbI2dDNeArw|",
            r#""password": "|5lpJjTEa|""#,
            "api_key: '|F2meuzpYGIcMYBi5RtN8xnwx|'",
            "X-Api-Key: |plOrkBz0Jjg8oWGAxeK5HX5r0yartY|",
            r#"client.secret = "|pFKSItWCadvt|""#,
            r#"token := "|AkoRItidWmj5lVqtF88qPps8KxBaNBPT|""#,
            "'passwd' => '|THLRCTQHv7|'",
            "GITHUB_TOKEN=|KeZjOa6jWewzg1eQKWadbDnDdCzUJSMs211OU881|",
            "secret_key: |6vDecvLqyZkUBdyzTNoL1|",
            "x-auth-token: |e24e3f31cc95aeda031a8e00f3f0b438d2f30ad9|",
            r#"credentials = "|user:UkYquQyeGEga|""#,
            "SESSION_ID=|115c9b7afb4b524478eb50b0b7b4ae82|",
            r#"passphrase: "|correct horse battery|""#,
        ],
        neg: &[
            "password = password_hash",
            "token: String",
            "api_key=${API_KEY}",
            r#""secret": "********""#,
            "password: null",
            "token = tokens[i]",
            "self.api_key = api_key",
            "password_hash = bcrypt(pw)",
            "max_tokens = 4096",
            "token_count: 12",
            "PASSWORD=<your password>",
            "the secret: it was magic",
            "token = get_token()",
            "password: &str",
            "secret: HashMap",
            "TOKEN=DEFAULT_TOKEN",
            "token = tokenValue",
            "password=\\S+",
            "api_key: Option<String>",
        ],
    },
];

/// The documented format of each rule, for the recall test: `|` marks
/// the masked part, `{c:n}` is `n` random characters of class `c`.
const SECRET_FORMATS: &[(&str, &[&str])] = &[
    ("aws_sts_key_id", &["|ABIA{U:16}|", "|ACCA{U:16}|"]),
    ("google_oauth_client_secret", &["|GOCSPX-{A:28}|"]),
    ("google_oauth_access_token", &["|ya29.{B:40}|", "|ya29.a0{A:60}|"]),
    ("azure_storage_key", &["DefaultEndpointsProtocol=https;AccountName=acct;|AccountKey={b:86}==|;EndpointSuffix=core.windows.net"]),
    ("digitalocean_token", &["|dop_v1_{H:64}|", "|doo_v1_{H:64}|", "|dor_v1_{H:64}|"]),
    ("alibaba_access_key_id", &["|LTAI{A:16}|", "|LTAI{A:20}|", "|LTAI{A:12}|"]),
    ("databricks_token", &["|dapi{H:32}|", "|dapi{H:32}-2|"]),
    ("hashicorp_vault_token", &["|hvs.{B:90}|", "|hvb.{B:120}|", "|hvr.{B:24}|"]),
    ("terraform_cloud_token", &["|{A:14}.atlasv1.{B:67}|"]),
    ("doppler_token", &["|dp.pt.{A:43}|", "|dp.st.{A:40}|", "|dp.scim.{A:43}|"]),
    ("pulumi_token", &["|pul-{H:40}|"]),
    ("grafana_token", &["|glsa_{A:32}_{H:8}|", "|glc_{b:48}=|"]),
    ("new_relic_key", &["|NRAK-{U:27}|", "|NRII-{A:32}|", "|NRJS-{H:19}{H:8}|"]),
    ("sentry_token", &["|sntrys_eyJ{b:80}|", "|sntryu_{H:64}|"]),
    ("gitlab_token", &["|glpat-{B:20}|", "|gldt-{A:20}|", "|glrt-{A:20}.01.{A:9}|", "|gloas-{H:64}|", "|glcbt-{A:24}|"]),
    ("gitlab_trigger_token", &["|glptt-{H:40}|", "|GR1348941{B:19}A|"]),
    ("atlassian_token", &["|ATBB{A:32}|", "|ATATT3{B:186}|"]),
    ("npm_token", &["|npm_{A:36}|"]),
    ("pypi_token", &["|pypi-AgEIcHlwaS5vcmc{B:150}|"]),
    ("rubygems_key", &["|rubygems_{H:48}|"]),
    ("nuget_key", &["|oy2{l:43}|"]),
    ("docker_hub_token", &["|dckr_pat_{B:27}|", "|dckr_oat_{A:32}|"]),
    ("postman_key", &["|PMAK-{H:24}-{H:34}|"]),
    ("shopify_token", &["|shpat_{H:32}|", "|shpss_{X:32}|", "|shpca_{H:32}|"]),
    ("linear_key", &["|lin_api_{A:40}|", "|lin_oauth_{A:40}|"]),
    ("notion_token", &["|ntn_{A:46}|", "|secret_{A:43}|"]),
    ("figma_token", &["|figd_{B:40}|", "|figo_{A:43}|"]),
    ("airtable_token", &["|pat{A:14}.{H:64}|"]),
    ("stripe_webhook_secret", &["|whsec_{A:32}|"]),
    ("square_token", &["|sq0atp-{B:22}|", "|sq0csp-{B:43}|"]),
    ("braintree_token", &["|access_token$production${l:16}${H:32}|", "|access_token$sandbox${l:16}${H:32}|"]),
    ("razorpay_key", &["|rzp_live_{A:14}|"]),
    ("flutterwave_key", &["|FLWSECK-{H:32}-X|", "|FLWPUBK-{H:32}-X|"]),
    ("plaid_token", &["|access-production-{H:8}-{H:4}-{H:4}-{H:4}-{H:12}|", "|access-sandbox-{H:8}-{H:4}-{H:4}-{H:4}-{H:12}|"]),
    ("slack_app_token", &["|xapp-1-A{U:10}-{D:13}-{H:64}|"]),
    ("slack_webhook", &["|https://hooks.slack.com/services/T{U:8}/B{U:10}/{A:24}|"]),
    ("discord_webhook", &["|https://discord.com/api/webhooks/{D:18}/{B:68}|", "|https://discordapp.com/api/webhooks/{D:19}/{A:68}|"]),
    ("discord_bot_token", &["|MT{A:24}.{B:6}.{B:38}|", "|NZ{A:22}.{A:6}.{A:27}|"]),
    ("telegram_bot_token", &["|{D:10}:AA{B:33}|", "|{D:9}:AA{A:33}|"]),
    ("twilio_api_key", &["|SK{H:32}|"]),
    ("sendgrid_key", &["|SG.{B:22}.{B:43}|"]),
    ("mailgun_key", &["|key-{H:32}|"]),
    ("mailchimp_key", &["|{H:32}-us{D:2}|", "|{H:32}-us6|"]),
    ("openrouter_key", &["|sk-or-v1-{H:64}|"]),
    ("huggingface_token", &["|hf_{L:34}|"]),
    ("groq_key", &["|gsk_{A:52}|"]),
    ("replicate_token", &["|r8_{A:37}|"]),
    ("perplexity_key", &["|pplx-{A:48}|"]),
    ("xai_key", &["|xai-{A:80}|"]),
    ("langsmith_key", &["|lsv2_pt_{H:32}_{H:10}|", "|lsv2_sk_{H:32}_{H:10}|"]),
    ("tavily_key", &["|tvly-{A:32}|", "|tvly-dev-{A:32}|"]),
    ("pinecone_key", &["|pcsk_{A:6}_{A:65}|"]),
    ("planetscale_token", &["|pscale_tkn_{B:43}|", "|pscale_pw_{A:43}|", "|pscale_oauth_{A:32}|"]),
    ("supabase_key", &["|sbp_{H:40}|", "|sb_secret_{B:31}|"]),
    ("age_secret_key", &["|AGE-SECRET-KEY-1{C:58}|"]),
    ("onepassword_token", &["|ops_eyJ{b:150}|"]),
    ("mapbox_secret_token", &["|sk.eyJ{B:40}.{B:22}|"]),
    ("facebook_access_token", &["|EAA{A:120}|", "|EAACEdEose0cBA{A:90}|"]),
    ("shippo_token", &["|shippo_live_{H:40}|"]),
    ("easypost_key", &["|EZAK{A:54}|", "|EZTK{A:54}|"]),
    ("dropbox_token", &["|sl.{B:138}|"]),
    ("url_password", &["postgres://admin:|S3cr3t{A:6}|@db.example.com/app", "redis://:|{A:12}|@cache:6379", "https://ann.lee:|p%40ss{D:4}|@git.example.org/x.git", "mongodb+srv://svc:|{A:20}|@cluster0.example.net"]),
    ("auth_header", &["Authorization: Bearer |{B:40}|", "authorization: Basic |{b:24}==|", r#""Authorization": "Token |{A:40}|""#, "Proxy-Authorization: |{A:32}|", "-H 'Authorization: Bearer |{A:12}{D:4}|'"]),
    ("cookie_header", &["Cookie: |session={H:32}; theme=dark|", "set-cookie: |sid={A:24}; Path=/; HttpOnly|", r#""Cookie": "|_ga=GA1.2.{D:9}|""#]),
    ("bearer_token", &["Bearer |{B:40}|", "bearer |{A:20}|", "BEARER |{b:30}==|"]),
    ("credential_assignment", &["password=|hunter2{A:6}|", "DB_PASSWORD=|{A:10}{D:2}|", "export AWS_SECRET_ACCESS_KEY=|{b:40}|", r#""password": "|{A:8}|""#, "api_key: '|{A:24}|'", "X-Api-Key: |{A:30}|", r#"client.secret = "|{L:12}|""#, r#"token := "|{A:32}|""#, "'passwd' => '|{A:10}|'", "GITHUB_TOKEN=|{A:38}{D:2}|", "secret_key: |{A:20}{D:1}|", "x-auth-token: |{H:40}|", r#"credentials = "|user:{A:12}|""#, "SESSION_ID=|{H:32}|", r#"passphrase: "|correct horse battery|""#]),
];
