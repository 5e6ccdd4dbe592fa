#!/usr/bin/env python3
r"""Standalone reproduction of a pjrt-conformance failure (pjrt-conformance 0.1.0).

    test:    conformance/test_data_movement.py::test_slice[float8_e3m4]
    status:  fail_wrong_result
    backend: cpu cpu (jaxlib 0.12.0.1)
    needs:   numpy, ml_dtypes, jax==0.12.0.1

Runs with no pytest and no import of the conformance suite: `python3 THIS_FILE`.
It embeds the drawn inputs, the program and the expected value the test computed,
prints expected vs observed, and exits 1 while the defect is present, 0 when the
backend is correct, 2 when a module it needs is missing; a crash of the backend
ends it non-zero too (killed by a signal).
"""
import base64
import json
import sys

try:
    import ml_dtypes
    import numpy as np
except ImportError as missing:  # not the defect: this machine lacks what the script needs
    print(f"cannot run this reproduction: {missing} (see needs: at the top of this file)",
          file=sys.stderr)
    sys.exit(2)

DATA = json.loads(r'''{
 "check": "execute",
 "nodeid": "conformance/test_data_movement.py::test_slice[float8_e3m4]",
 "via": "jax",
 "library_path": null,
 "client_options": {},
 "platform": "cpu",
 "devices": 8,
 "program": "module @jit_data_movement_slice attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n  func.func public @main(%arg0: tensor<9325x1xf8E3M4>) -> (tensor<1x1xf8E3M4> {jax.result_info = \"result\"}) {\n    %0 = stablehlo.slice %arg0 [0:1, 0:1] : (tensor<9325x1xf8E3M4>) -> tensor<1x1xf8E3M4>\n    return %0 : tensor<1x1xf8E3M4>\n  }\n}\n",
 "inputs": [
  {
   "dtype": "float8_e3m4",
   "shape": [
    9325,
    1
   ],
   "base64": "9ILC2c/rD6Mh19mC+L0QRbjow06pPX0KHfBCeLYnOwQ7Ud4seHoy0E4cQKZ5Warpf7LtgHF7TJtFmoL4X0nAur9/3KHnASuL7b9WjwfoYO9MNwBHTcfb0LCQvihoeLMA8PXmZL/YftsflYSNcxCZCHnTz8MHs8q6pie5nUnE9ywOf9sWOkv53C55qAXZM52KOBKVFCDruUzx1iZ7zzo1bAyjOmc99T8HaMpeAWAH0R+o6x4CqQquq7vijoY6Nq6lMWbeQfDgiZ1lGpnDM7E4Yhr1/nV9Jkn/P8UTzlYGGPstcShh1a1/rz7GOfOWf4SmvKUe14ALPrCvaTm0vFrWY7o7CuA+r5UiFQQzlLl1s7g7anHY8Z59hhhOG2D1AmzKGA1HbGa0X3xDswS4hnm145KmrBLSeR3vnCAGiEx3mFvRpTisa8dPku3eLUH8CGZSo9YxuPkLJJhClCGBnlmBVrySusKPJEFk6kkDVBoF6eOjupBDAwAnXLwC1LZVMYmf74ptDJEHghUTLIxgtyoo1U/unWZRRn/JYO0DUdlQRz0EH6zKQkVh4Gz8TBSSUP4OrunXq4bEC1a4pNqSE7d4JhakK9zTcEnNr0oez0no28tsVZG0KF7iO4i9WsSaRFENq7fxkZm1kGe8FST/OcDRMuByT/JylzsXGzvgn8qpkJQiQiHm41l3TBRh7uY32wes7grx47JxEzPkKBzCJlMu8RTWcAwo3Hdd7IHyohe9ARuHhFOCWDsNoY+ulMMzAFrttETqaKWOvHAw52V55wpg9DPiHDILLPl/cNbBDH3I22yxDgDyDE/GnmgPgFkCpb7+Q9OPmrn57fJoVC4ErITFdR2av9WBhPrBwkpRaAEYV38e+JRrHACBh9J/8TpuQCnJTb/kE8DiJmpVCShIiB0HvKy90b+rdQ3eafqp7K92m+4QKEUvnTlsHYNc4iEWvKC6pRtn+JKna+3X2BGrwgLK9+MhC9/aysMDnE6GAleEF90JdRUVIJkv+0PXztPwuQv1Xxg+XPdlFSZgPlGEsjP++GRGAl4L0dLjNc9CYlYXh9KJt8U6E33geo4zrFMIynw7UBaH5KwLSM3pdcAj+Xhs7FmdkfgPHSFE/kUqbfea94mLVDeoYj9YcfURFSacJlfu0cUosfPoXgoXWnbQDsJku+T36i6rkEedmJ5tgNvzQgcbDWrteskeuCOKak+zCBgETf1dF5QTCcK7Ijsm2ydEg4qCEeYyxtntcfWWRFLI6hC3CrB+uZFg12ZW6Z+umBIRJiJxpuKyJFjtNOk5xQ4obj4IkN8yJ0/3ly4cJA9t7o88nPHCMfNEQn/pzEWodd49W5GpNea4W+Muk/c3MJTSOXAJHSA00eIfBLhJx2ML0EkETk7NQikMll9DwNsJ4NiNzVWgw5U0Sc/N6Z8PHFp7jyUaZHQD+dVJTFLTcyCTs2niTuh9PmBw0UiZU9M+umKggmzVtcUchvV2fgyjmEmRXvHAAxWt8neN+4FBO55qCwuEwJQG1Zwp2cXEzvH4wD0lleaz0bkVEWhhxKsKDRLz6EKw3/B9bgYLC7bml/fgnNJCvTPKt5tWaviFI9xkCG7UilcFHdFhjAIltysaPapzXZqCFBweGSEUXvM9Qra/EacGgDCGevkaRmeTUfOPAeGzK+9oomb4nPEdnRlz6hV3IIy3dQlBHGLdEDZoaOoKOQ/ZRwB6EC16YfDrW25BrAVu7RtsUHA+JX0QONV9Sm/5+XM/V7GcspPGRKUOArBGEU95BdT7CAYURb7mjIIZcvXcMlt7o8xYneE1EhYqW6m9grrJtqLYwyNYmvj9kkDnsv6dho+8Gq3hUNq4XhAMPcYuSiaj30gcTuGqthBFcDb1zz76GUbSzPqqKkLiBYSYWvUETf+QaqH77Hp1RPbCNo2/SWLdoHXtVty7wxf/PgJFP6s/AuX+uygkDLfcGmEsiat0nSsMjD3xRqjyJNIR+8MqUZMtrs89Q2WCX7TkmqkG6Ttq15Pw9bePGo3otZDSDZTnFvG+k32yMZZSO8jiZKmG6Kl5wHvR/4Xxt3pOcnzEFn99foapmGD7smwsCWn7RpIyD3ZyNQOkAYQ7J4uKVszFvErUvS+fb/qji3GH4LgBlzqPP/fcp9ZRLZdqzHKBADCBrIdcmp8qrEzlYZT3jvIxMmHMqI1a45O51aPrvlgsmjmsZuIdXGH2a3ZrFvj5fxJWlaaADjj+f7xCFY4iLH2+Rhe6UE67Xi2E9huuYVdYY+ovAu5c6xkQDaONtQpU07m5DmJFy/R3FiI4eFHuuiRl3Aq7+g0tn981eSg7xKzoeLUikplOl6HpgOeRIuwkE8SfvNzsyatS6gRr7EbNe50gl9sDmMAE1RKBXUchv+YAEvws/TUrPG3ePL0zrABpUqLFK0PzkFIff8hpPQo4+90pnZCiQmnLeawqqWdbaJZpUbsouBwEOfy1dqJEBsrY2XXpo5K+dovpgXkh4a+PiCfKZVeSOdEqvhdCA20ObIQplOkVmENQ/X0y60olvNcM4s6e8lP0iQMlfWlVyYVSIxv96enzgKxf1S7nG3pBIGyI9t7fDwsf5gjN/3vCpU3jM3vVPWDVt8RD0Ia2o3BMTlSacfeBw5gDtqfy1Et8SKPn6SwR/+Hfj7EQ60wPjHTJwdX/VJ0VCZ2+YRD1OYIe9VZT7+wCstmJeP5dPSZdLBn8x2mf/R3mB0x8CjBfAeVfMWy0R5cDALyl4IDuKfjcazkWaVFq0YDuWrXqfgBNlAkGys4CWvZJIpjMSMFJsf5hgVIGwEGbpIvwyzgD8bbwH6857Jp5ab42wFzFIduxJeHdamc7YWs92JmKTPdRlMo/1BxlY8nsJrstaOND6yy+tBMAHlhPbzu8j74ZV9rCL4oU2pPzGTPKBpEj1Q0fZN5NK7R0r7BM388z0vyaWAXZGVn7arYQDIaoAti8tecAHT6SbIk7OE8T4cz6U9Wmp70KVx4YjyBqefnwgFe1lYBS3+HA4LtXgjpD8emI1SMxRsbkeYQWKz9YGCHdGPopI1//mbM8gW/pup4+S4RzeEfy24TELD9gl+tlGJIA01fiaDwGGCb850XzgTFkp5/f6uiw4BJUo99z/hPmeXohtwOSxbRtr54TppsOemyXbT9OrMcXG3VLG/u0N2gfZvRESbJ6C++JvOFLH+4dr4399VnJVePS/G7ZlfvDlOUGKTSjbHZUdCyEEn3HvUsKqInkHiEAJLZ85rujqq2rkbtC6x1E7nHTXbbSyzWrO4hBkBpB2cMw0ADwj4UKETz/573QR8qmvVlTGLrNow/IK5AsZlK2zERkOQPpuVbix8ACI9fJqU5xcCd9iZ0vFKCW9x6pxZeQmiAJ4HFR/DrjuUCNpTP0erNHJh2D+vtPzDBmVIH/hUrq3Mzl8ifQW32QS0rgUmgfCHwrUB2cdFAZ5kqDae436QQWCVPS/ZUtN7J3Jcc0uKX2U5S24JVDp+csJfKR/rSav6wPuSs6PebhXJsT7aWjDXRUC4gpn7PdlPGLwI5dTzcFM0r/J0kW0B2Dz1hEjqe6JQZSEaekwH3SKTQQQKHpWidJK2uEMZggDMoRpLUIS8WMjrZ9wqqstOg4a+gUyKqLyI7eewBr5AgcAwlMeSInwIa2BzkuaPz4fLeyKgb25zRjpU9f3b0nsYCcv1jYTIMU3xKf+/WcKnYUP5539R6UcAqTgMAwnIRs6WSEBDCh+zv1/RbGNsJjk3rsR8te3Wr96Sa7f8dbS6gHtANZDbI3JzuyAWUP6FqC9CIboOYrsUQGUNuC8K1bZEa3+JJ4aR8Fr+bGz6FIQnJ8V9PuhExDais9FIMy1+/1YNJc9bNLyGzBlacMM+DksgF6NQkK5zwMk0EQ4dQ5fryZEn+oqKE7iNgEYI6RLf7seJTHqM1wVprsMJkrPoN+h7z526i0+6yggxuAiNHAQBe8c+GzPO+pbAhlLv9X1szDeDsx+6yVh3SuvyC6FWrV1cmkHrdSHnJBy7lId8RNXfEyFTLmnkt6ZE1a2ZgIpcXHE4UuG0a6zJg9bdaY/uKb6WUK5X00AYXIqzG4pdxhpiLt8b4DniJjK54pSM57aAYaINpVLBQCs5R30p2Kicfh0ytkhxr6CvAff3eqoYezMsjx0v2RkSiDdUGuoi0O3NjxQda/jtG1j9nxwXvp3NrsKvew1wH2ZMeruOmUBYmO/3yj0nGHUhpjDdctNuMYjEegi78KznLzR78wFrhGPzgg6gRt8jdD88iIkWUDQVvrx0nBM0hnyFeYjBrwFdIW/M1IQxjXLj0lixZBAfGmGe8S8KpSTG/hhyNyof36EcDWVw/DQxTSll8fYajULH+YfuEsUSwiKPrwUOQcls2pzsZuUFr19l5/nE1pbbeI6djbFpIC+4EAaokBJRaTXA8wq8XSu/uR1Idz2rZI1pidHUeXRjvHdu6THL8SdOM3Zg5XlsWpoVz2KCT4tDpbb4iKGJuEPYf/MJ/8D+77Of531kS3IQ3HCdJDMMJDiisWDTc3qj7Dk++w8oAYrDCJ8GoDB3fSAaygQ0NQNT8dwpddU9Uqrh0cgKR2S4Ah/J9jNcEsQQP5aX3EoFknTjyduQJjvpT4qLEGlUdRef3hlePoSs0DbJ67zze3yRBgIIWMI9aUNoF+dgqzy5wyr2lJXOqqdRCvqTqTqRiBnlH/sf6AEcmjIxqyiP2jLFgkCzJT5LRfQVbK+HdeIAeciQqrD9VKS6TH/Yd4okEWkURX15XLb99lmox8lbalx+OF13kvWR+6ZUUeQs81eFGyfvgnPshBdCnELLZtyhXICqgX2Kgq3zCBOIStyGotRUAWa16j4txe4YVik+hol5bEzDuQQDGdEHvLwu86kC3a/Z0+Y6F4VpIlMi8qR4V/opGsfuCzjKftQO0M5UF0HA5QIlsMcqqjvGHPvjJEE2cwS3zjokTVRQ+RwfHJMPfNLTszUJuUS2ihU/0LMVVkrGYewh0eodUe+ytsh4F73OolPkrF0KB7XL37tpE3/JnFVnPlOxPq/YOO60gRjcxCiw267Roxu5RfdFKuQhGjxOi9L6v0xW1PsrUn6DvSFScSzZRR+WUiWRJznZZIS4j5jysFZfFG9F8nuZSfhVxrUy3/IziwkyM1Tqp1Nx+HpWYPzPcp+FqMrL6ccwUuo/7grN1WGP+sIlMamX9e647qvQ0OcsIlYwBS30+8F7ifuD3kUNjwhpd6t59/3XYfVz/Gy4HhlJ5NelRsN9Mytou5iBz9nm3CnAsr9Z1XSV2ce6DN4ferAWJjSYhsDI/WkGH1944YZlv8lQ8OLs8Dk20H7fU19c/P18ZKqo0iodEUUK5mL3b1DuB4KVhxlKcT8XrchRfThQlD1W4gjBAUGQMclxlke3Cme+US4TwDO8Yu40E77WzTvPhLQRCAjJDP5TA+cHxLIu71izMSC68zl5r4NM4KwIzhg7gIMOI5/yzVxcC5NoGOAKeZH8Uq03mhP4DTSm2rXi3v3zLQq6UkkHCH3p407scHxl/rMZdOeD2ALShpp0tv8C65fvDpodzBS035cnqKlQyTTqPHLNvImyRdmo95BVOEAxT5tprKfhNvZ70xPZZaH8NvYoNTPWk5nY65qDXDQftS7AZgoCkanbfMou2jpyYJfD7Vb0AUUt//uYJC6acCqsbuAaNKG0Ok1KvTIJQPzHFChSR3x3zN/CZajVuUu5QFM4zL5RKt6qhu4+1rwGc0HCMkEn4BEOvRMcv1CBXkdarHtdCtDA+BUd4L+JI257PlUIjhNlbFfhCCtDqEXRfvKJgeQt1gqMbtuMN6U/04wcAlY7WOHncq50fMovQzU4wPu3nUTbkvDXWRNt84/vbYYubwGVb7edimcnfwy42Hxxdo6GFGSIJBd06/EVe+oDuqO2WHhiVdn5im4OSXiTl2wkNwiKJNqRa+3JmcaQqYNklFxmYCj/pLYazVE+KSE4R0kR+d/MX/rOKgGlLmoKcIOuXgckHC91yEKw3srffFT1omIJTk8eX76x8gf2T79oGRE17Q/OJGXcOIWQQ8kFVbbSrxe60hto6izjCqej7Bzcm+A3FudBQ+5u25XYNzPeUjeQYbvxASZm431f0ORYWrHFtStHBsCdwIOW85H80D4yVIw1cpcP1rR+1Dt13/OgHMaojUQ2N3C8hilyYBW83tdZwKd7mjYjMFqpR+wMc24gepwJIWRYDDshUf1ntpQpH3lE/UmOoxfWW8Xh96UVJeqss/oMSnRC6qll1RK9tmPG0hiqg8foABcBWahdO9lqWzUqyt48V/fnTtjUQs2112v3hOYbCeKcc95Qp5eh37Qa11sWwOS5RrT8Ec3+P8aUsxfLx6DXTrgm212x8lQTypMlFY+YIqvTXO4/Iix4GpcQVEyWsYn/3NlAE5CbBdKlKeuMjzjfY58zWtkyIyIISxKqjEJyu3+W36ryyqviNNOxWWka2rY+Xrgh2FQ9n7Ze9QqxSaCtfbcLABnK27annKzi6ishro6a++axRpt6nS0NxgP8MF7zmAdL3/zTwh8hdNbYfJe5UyYaWf6ygk3oVxoWCcRwbz3ThgtYtt0JLftR07gPXtvai70SR5pLoOdOa3vx32Rj5HxDGraobVj908R23Wcm10Ry4DI8vyEE5zLeepI7xXYZsZ/b9ijHPyTSX4KexV7jAhFHawCcMmQTcIC1sfUnnpqjZF6nShkeyr52TANdlZDPg+E0ZgF7GhLX4i8Fqv4UFmp3UGjBk9s2mgUC/rV9bhZVrtPVhPaSCwmWm7166HNLPysobPtL/4hU7hdtvg1Evk8fc4rtSAfhvUp8EutM67gK/6HSsMcpcUwVE/gIvbXUGhbc7ztVnTvNh3c8oKgT+PIHfgzv/L2qKoBpo1twlrFZkfylEU2WQwqfkvK6dR85Pq81DeVHCwzM5vYF1o9vjS1oN+B9TFkVKZ83hMAi3iYCSN0t1UAIr2NlYsy/bIVhz7+tlkRNf5tYmY48Es2/UrN1UTI8OaayloZwKJ/RER3NvxSn+SO5TJNZdmHftNaFBfb/g0tXn/dNVHEuIPIVkynwPI9amSXCNztXnw4lCELWQ/IWZlN3NpcLdd13OzaS7BgmF/wK4Ac8RaPnZDV7GsbFtLfLFW/e7Mf2u41FRcRcNW9h9yKTPh4nd1jW6VzlMMPPN0YTXuKPPQB25oiIAWmuwQ+i0GbXfmHgfEa39ICll7qhyaBNhtK2E4Mfd0aONFkJPJWkPFdB2dy//Y8f7IwfFUnpN+jFy45D4sNZ8BjmC0uWou0XUScNR5GX9cg7aiMiaSNim6n81iFkTpXhFlAre8BIZGYZf7Q9z4E4fT55ju452YJjJ1LpWCdOBA9dvMSCd9gwfWJa/EOZnfmkw/JBp0W7QYfihTE9p06lHXiVZzpgzOQHMvbcxGKwFQRYAxhcEYuNRd4AF5b2MdAEz8apb728+pZ8oPwW2u6g/f+n9S1l3iRSAXALkDRmrt3Uz13bf8mRXs564CZmpURzfyEr9/Dd7SK2Y/5jJB1n62cHf07SpcHEiD7xszjBUF328lxI/g9cyrjaTrmFTBsbfN8sLb03pRFlZ1d3fBimLSR8Fz1Ke1YNfRFdKGB8teQCZZ0vRu+P/vaZxztwyPlm8+un/p4e2LTjOKPvH55E66DAFgzQhgLrjCelMfChSJGniN2h/wY6T08wTCnau7VusYzW1FoRa9h7xXmWJTUse43QCALISSRMierh3DGmkrqotcwNqs56P/6Xv/IdAI7tReS0+ElMk21j+RH2VJLdARonE+yp3QPiVCvAl3Q51WtkVNFrsSoSAMBC/skORbbxbpd276Z1gthMESbWsqXuJmhP/X/JcSl73YLvlqvNxaumtfwy6aJFFm4XY2yLoQ/s5kYI9FKNBsflJN1ZCIwyfbiD5hpbwaqoV9DB4zWAMhfpfkznGO/8ummjeuQYZ+pZf8ekDRrpTwZMglqx9SPwBjSoYU2YQTD6Im0hRCFbeIxIANTj/ItyRAZS/KxRyCfE4SeuLBjJHh/xWpkNj4qVHOQKD7InphkYi9zmG/GeMo4p5gRni4CVU3VBgWU1BvZm78Rfu71tfwJwVMY9jIhCr6x8mMUsvyR+bsuuknw50HL7kM3/2WjV2W/ghQ68jlsn6TBzNKjcPGQMJ0fdC/G50XkCL2FufsmZzMm5zpvpOKPOCbT8YfbGav/55lMnJmC7PPKLJLpWgghHBIdpjMvdgsLe8SW7goH7TB0Xm8mvx5Ms8XpZclYE0dbNT/NPDIJe4HIzCcqBgf7U5gmQMqFEMgPIGbHOl/JlVF6kQpZ6aOcl6filqgBLitQIQMAzf7mXBiaw7u2lI82np1UD2rE8gya5FIRZsQv+VvGCpgBKN7IqJA1PAro57K4NQQWkymO6ENuV5ushokBP34akwGMAlu0jHr+erjn4N4SGddfOSEJFu1YhVhy8GZwIhxqJIzKqCKCXO3D7KrJREwS19Ef2OEaVYdNsPQi6z+s8RowQMl3aXGZnDqth5EyffL/mtDgfzgasLbpKNSgrTi857HN5szTJukMfRsSM+DKhuw4/uCfzTCTcIPQc0tJ61ME5ylO4JCByZhMMeXOhlMrFNSS/M6g8llkvXReKTnfi6nhWiTBRuvby5klL9dzpk7eES7J9Dwtv79sItvCSfrDgQfUqTU9W/5Xopxc+hqgJVVw6FMz+5J1Gc/TzYRtnqD3umbEytNwjRwhpwKPmBmEeJRDR9cQ5RWk4jqEgzJvrNsiZ96K2bvlkAVjI0jjVvY0vFZ7OM8U+qkKduigJ1yVDbUKW2Qw0xMIXPjiHV+RBwg8oP2Ja7wuOivOE519apEZ2GgJ28Nsf/RMGx8ezpzNuXJ8stHbvbwOeL9JjVyqVYIS+qYAHqBKi7T46BRte7hxbJQLV4vHvIDjJ/dZmz1apDI+ikD19v2MGAawPPd30PEcFRnqZpduHr8e3E5vYCQjMF/WcOzzRxLZ12rcC1U4nR0D9CqNtKzC3RHgKL5rTzPB71CDnXZUegfNxybAoKtwAdsLVXrGeF+SngdvUlAAthjA3aZqGfZAA6BF4tDL3yqZOD/R0pnc8RwwnTGP76fUztvp0hHSEjbDQaSsLJzDABdbwFFU6HSoUe6m59Z6A9N0fH45nXC7aByjbxVhgpZQHVf8GExIrQ13FJnYQ8MTKAtQ0XK0h43fzhkrHWPoPEvSC8ogjZc3OITkI2pnxfk4dVzOoTWg7CMVGhwG5K1wrRFJDXnwBSOc8fYr5FvZCvN/WSiV1uad9UHfWxYVfifw1moMcaYAD8+ECEDri/gRAZ4UqTAE0aDqFcG4QgsL0hpmuaH21tH7uSVAA1csvce3ESHjeEr+qOIx77FIQsuoGAavBmqiGyGtusQz/+aQJm1qp3lpXgXqq7jY2bBUhqp1xx74P+aJsuTFahLOu1sG4RcClThaBdUhCAwO/iEPIHjWFK01/tm411hppHeO8yH11fL3m4xcUCBFBUUoQLG2BUNHS0AyHvwcj4PH5rc2ItKxg3y4Gp5I4eycx8FwoNy2ju9kH9ZzPAtCpmPlitSqHkCnYsMGfYeBooBS7Gl8RLFWUKaO8Dd4/Bf4RLTWqP0jEt6EWuSKO/rHJIlc2i67lbDSdx+5XWqw7pi55j6goPDjoSFYuSeII0+SitZ32p9OfM4g2/jSN5iDuMN4EH3dUor7PbxcFuF90OeGShE+gWlrE8muCO0tugFbXj4bCDRS6A7/pEDBM9to7vhhw9QP5EapYChWnfPWjnnLEPZKN3OlSTc8PIvbJnk/27F5r+eB0Bebxkl3f1Wt/VYAYGHDgAfPziW6ZWHe4JMfHd87qWbHP5w0gg5zheu367BE+b5PeHIL7NxaNLNeTlj/DqxHNeex7GpjnxCY11AO01p93DQabefLeOp8kab/ulFKoLDtMdeb/6XC6OL+XD84k5VqnCvz8/g25kMqO1o2stQkm0DtB3N4bnklSkPV/xXugM4S6XqQNfnWTmuCK7bKmbWy7TE2+hGZFdGrlSKmooAjoLEL0tV5rh9XRRxwzCnFokbG2MZ4+srS/jaAyQ68g64WVvTb6uc6MeAkTS/uhFUj+WABbC5hVH1bKCtc0FCmMeyE0kdMQbn+BDFOm0EtoNLJR/D0SLohY5urrejdDLcyPJmd9Nb9svbBH6kIOwB3h70q+qyu/ZICfpeVSJZ2JkcyQt1bdgReZHWVnoJPVQ9J86Fkv8PQvIw/b18UwthL/ACiCkyVO03ANfRRjpp+ZevipA61TQIUf5sH9IEzkgW/VOk+UrG64W7OCz4xJAcVf/a0oTXl5eUDVquk5WsUoVMl/CTxmWfSXALof/dlNXrSaQ5SZt7sfKQoI7+/ZCAMd6SxRJpe0a8Tz62zP8OzsXBoFc1a0M9zxfFp4sDrT8Py23vhxK5FQO2T68x8wRz9nYHXjJ5b447dSfpBONZJYMt39MTRPRqqlLt2viB4cHa9FkbOe93OCnCc0reRP4V0NBFyqg1N4W3yFlG6634vWZk3hIV7L8JeoXqriOKuMCz9JzMv+GlliPlSqR/E10wJKdHWIJhlSPiTU2PqGeord9UggWeMy8sIpgKkNVRXZNgUlfbU3sNvPtL+xMruWsYUDhVYqcDwBIzgjQqsEP3QpAySGEeqP+9i3hUA3JEKIRNRejT1zpHxjTNCX97olhTi1OYb5v5bZDuNw+z/WjQ88lym9kCVeG6FxCQSglACZsH/ntE9xkVdwOnqwzF7r1EI7syRHMhraV6QvMQUAp4SLeTowob43YxCMB/jSKcGUOdXw8v998Wv9eNAhNf+aIhOtGt6hzp1fejbBMmr/cx0KjURhjkLsp1c1t++Iv9TXjRWL6qmzJo6VEEy7lf9TUGFyMukAUz9x5wDwUSi1CQ0U5EhdcmrE3X5SADa2ha7G12H3hk/PRn2GmgoyJ81/bmevr7HNAVmVHS6LGFneVMAg0umZGuop4AY5PIhA73Ei8ovfWcxrE8gvM9reDZP4iFl5ETgUDPyF6A0g9hEv0Xoaa/rkFx8zY7ZoCNTs5KDYsRDZGPqUfWc5GFncvAcM0izU7tcEdmCLNeZm8KSUyZK8DkKjCyBJveGfw0F6FpSph1/lVVPSgPjwRPM694p/zLpkI5l0SdYqaYMYGpGtxlObRYYHSqLjzxx5MaHMkxpCMmbtdLPt0ghFKRzoJMSju0ATRGf4V7VEG8l2A+DqIcqoH2RtMSxSj8bp/tbkj1m8QH0G/YTABVmjRT90NCPAQi5PMiiTahUJzcrqIc5Tytask06cQ9gr1/e/AqBWufoUfRgn88i07gb9OU3N5mSAZbNHugWa4hzuDe+bbuZFmGBcZF7u20PnNCPGvZzPf3HjCuKmdlylfDcXZ8t9uJTBP4McoEdSxwq44r0kwg3DS2D5TxGdoT2Lb1RIv10NYw4jWtarQi+k4Niouu1N1FVbXpPMPahDTP6WrF9lu+hoht5wYvp1CFOMaP2nsoN3i/Yc5UByvZRQkGRYmcp5nlzMc6gAbQJf7fKAl3qaldVluRWnnF6ds8/ku3zG7hdyIt1zfK/TtW1MMoxKPASFf8lE9u5+Eb09MNVOPp8Ex0Jx3uSo9Lx/IZqbPtXVnsT4qoOdnhsajBXGnhZMP+I0kMWwEWbxWRxAUUIHINTYEE1UUYJKbyOyFXXnPOHqleQuVjuprUWL7eGp71a+tAj1KME/s8clTIe+g15EsIRWcb67TMzgHUEZGUI7DhBxmTGGUgyvwBDUAksYcuWOKGDM0Wf+yRjuchPjKMg+W9Uq4PW9uVhwIyEZrOWLz3wgiBJSgkVymVZYUNpry5G50Tn9Sx9fiH+mGtZUWQMTtLxo/dpoZme6bYeL5udqx68GByMyRuZiluMbYVUNg2BaMR3iv49AajP86cfuu+TavPYZVbSiU4RXLG/NRS3NHc+iogeGhiPN+MEwSOF5bStP4RMGMAQlnUCSZBwS4MuHywW16wtbrLWpPGjq9YAiP3tzWHxaUSPNMeDQtmdfSaiuFofB4NtODrEBZk0RYmd4RfqHRYrPzRjtRaF7GlvoP5ERoM/b1szlE3qKazeVBm9UCOHOi3iPif25trA3eZVwtlOo2aBH5fG9Qj6hg74+D/pqtc33vLrFP3y9L13/ahjvJJvgh++76ndWodIhboiVnD0y/VWB2Y/PPJ169tVA1NjuxN+/I4tgMrlqrBhorZsDnXHJjM+h9Ci9gLisee3D3TqoYCoT2fu5gUqMgGKgI66vBNYjB4Xu7Dn00brfpg6YFd/YtVTb2EzeC1XlAu2Yp7gRmbir/bAN+fRATpkh3W2987KtCypfAcXDKKF9QTRXbkIpxQqUxYtfwLFW++Ge8SqemiBbO38OhEWtcwW+5R1qZqSf2HbagU73WFD4/1Ecxu9+fzT3qJkg=="
  }
 ],
 "expected": {
  "dtype": "float8_e3m4",
  "shape": [
   1,
   1
  ],
  "base64": "9A=="
 },
 "assertion": "assert_bitwise_equal",
 "options": {
  "nan_payloads": true
 }
}''')


def decode(d):
    dtype = np.dtype(getattr(ml_dtypes, d["dtype"], d["dtype"]))
    raw = base64.b64decode(d["base64"])
    return np.frombuffer(raw, dtype=dtype).reshape(tuple(d["shape"])).copy()


def ordered(a):
    """Float bits as integers ordered like the values (for ULP distances)."""
    bits = a.view(f"u{a.dtype.itemsize}").astype(object)
    sign = 1 << (8 * a.dtype.itemsize - 1)
    return np.array([-(b & (sign - 1)) if b & sign else b for b in bits.ravel()],
                    dtype=object).reshape(a.shape)


def bad_elements(out, want, assertion, options):
    """Mask of the elements of `out` that the test's assertion rejects."""
    if out.dtype.kind == "c":
        return (bad_elements(out.real.copy(), want.real.copy(), assertion, options)
                | bad_elements(out.imag.copy(), want.imag.copy(), assertion, options))
    if assertion == "assert_bitwise_equal":
        nb = f"u{out.dtype.itemsize}"
        bad = out.view(nb) != want.view(nb)
        if not options.get("nan_payloads", True) and out.dtype.kind == "f":
            bad &= ~(np.isnan(out.astype(np.float64)) & np.isnan(want.astype(np.float64)))
        return bad
    if out.dtype.kind not in "fV":
        return out != want
    g, w = out.astype(np.float64), want.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        nan = np.isnan(g) | np.isnan(w)
        inf = np.isinf(g) | np.isinf(w)
        if assertion == "assert_exact":
            return np.where(nan, np.isnan(g) != np.isnan(w), g != w)
        atol = options.get("atol", 0.0)
        atol = decode(atol) if isinstance(atol, dict) else atol
        if assertion == "assert_allclose":
            close = np.abs(g - w) <= atol + options["rtol"] * np.abs(w)
        else:  # assert_ulp_close
            dist = np.abs(ordered(out) - ordered(want.astype(out.dtype))).astype(np.float64)
            close = (dist <= options["max_ulp"]) | (np.abs(g - w) <= atol)
            if options.get("signed_zeros"):
                close &= np.where((g == 0) & (w == 0), np.signbit(g) == np.signbit(w), True)
        return np.where(nan, np.isnan(g) != np.isnan(w), np.where(inf, g != w, ~close))


def run_jax(program, inputs):
    """Compile `program` (StableHLO text) with jax's client; run it on every device."""
    import jax
    jax.config.update("jax_enable_x64", True)
    if DATA["platform"] == "cpu":
        jax.config.update("jax_num_cpu_devices", DATA["devices"])
    from jax.extend import backend
    from jaxlib import xla_client
    client = backend.get_backend(DATA["platform"])
    for dev in client.local_devices():
        opts = backend.get_compile_options(num_replicas=1, num_partitions=1,
                                           device_assignment=np.array([[dev.id]]))
        exe = client.compile_and_load(program, xla_client.DeviceList((dev,)), opts)
        outs = exe.execute([jax.device_put(a, dev) for a in inputs])
        yield f"{dev.platform}:{dev.id}", np.asarray(outs[0])


def pjrt_type(abi, dtype):
    name = dtype.name
    special = {"bool": "PRED", "bfloat16": "BF16"}
    if name not in special:
        for prefix, letter in (("uint", "U"), ("int", "S"), ("complex", "C"), ("float", "F")):
            if name.startswith(prefix):
                special[name] = letter + name[len(prefix):].replace("_", "").upper()
                break
    return int(getattr(abi, "PJRT_Buffer_Type_" + special[name]))


def run_capi(program, inputs, out_dtype):
    """The same through the plugin's PJRT C API (pypjrt), without jax."""
    import pypjrt
    plugin = pypjrt.Plugin(DATA["library_path"])
    client = pypjrt.Client(plugin, options=DATA["client_options"] or None)
    with client.devices() as devices:
        for dev in devices:
            da = b"\x08\x01\x10\x01\x1a\x02\x08" + bytes([dev.id])  # DeviceAssignmentProto
            exe = client.compile(program, options=pypjrt.CompileOptions(device_assignment=da))
            bufs = [client.buffer_from_host(bytearray(a.tobytes()) or bytearray(1),
                                            pjrt_type(plugin.abi, a.dtype), list(a.shape), dev)
                    for a in inputs]
            (out,) = exe(*bufs)
            size = int(np.prod(out.dimensions, dtype=np.int64)) * out_dtype.itemsize
            raw = bytes(out.to_host(bytearray(size))) if size else b""
            yield f"device {dev.id}", np.frombuffer(raw, out_dtype).reshape(out.dimensions)


def roundtrip(inputs):
    """Host -> device -> host of every input, through jax or the plugin's C API."""
    if DATA["via"] != "capi":
        import jax
        jax.config.update("jax_enable_x64", True)
        for i, a in enumerate(inputs):
            yield f"arg{i} round trip", np.asarray(jax.device_put(a)), a
        return
    import pypjrt
    plugin = pypjrt.Plugin(DATA["library_path"])
    client = pypjrt.Client(plugin, options=DATA["client_options"] or None)
    with client.devices() as devices:
        for i, a in enumerate(inputs):
            buf = client.buffer_from_host(bytearray(a.tobytes()) or bytearray(1),
                                          pjrt_type(plugin.abi, a.dtype), list(a.shape),
                                          devices[0])
            raw = bytes(buf.to_host(bytearray(a.nbytes))) if a.nbytes else b""
            yield f"arg{i} round trip", np.frombuffer(raw, a.dtype).reshape(a.shape), a


def compare(where, inputs, out, want, assertion, options):
    """Print expected vs observed; True when `out` is wrong."""
    if out.dtype != want.dtype or out.shape != want.shape:
        print(f"{where}: observed {out.dtype}{list(out.shape)}, "
              f"expected {want.dtype}{list(want.shape)}")
        return True
    bad = bad_elements(out, want, assertion, options)
    idx = np.argwhere(bad)[:10]
    print(f"{where}: {int(bad.sum())} of {want.size} elements wrong")
    for i in map(tuple, idx):
        args = ", ".join(repr(a[i]) if a.shape == want.shape else f"{a.dtype}{list(a.shape)}"
                         for a in inputs)
        where_at = [int(j) for j in i]
        print(f"  at {where_at}: inputs ({args}) expected {want[i]!r} observed {out[i]!r}")
    return bool(bad.any())


def main():
    check = DATA["check"]
    if check == "lifetime":
        import jax
        x = jax.device_put(np.arange(4, dtype=np.float32))
        x.delete()
        call = DATA["method"]
        print(f"calling x.{call}() on a deleted jax array (a crash here is the defect)",
              flush=True)
        try:
            result = np.asarray(x) if call == "asarray" else getattr(x, call)()
        except Exception as err:  # the correct behaviour: a Python error
            print(f"x.{call}() on a deleted array raised {type(err).__name__}: correct")
            return 0
        print(f"x.{call}() on a deleted array returned {result!r} instead of raising")
        return 1
    inputs = [decode(a) for a in DATA["inputs"]]
    failed = False
    if check == "transfer":
        for where, back, a in roundtrip(inputs):
            failed |= compare(where, [a], back, a, "assert_bitwise_equal", {})
        return 1 if failed else 0
    want = decode(DATA["expected"])
    runs = (run_capi(DATA["program"], inputs, want.dtype) if DATA["via"] == "capi"
            else run_jax(DATA["program"], inputs))
    for where, out in runs:
        failed |= compare(where, inputs, out, want, DATA["assertion"], DATA["options"])
    print("defect present" if failed else "correct")
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ImportError as err:  # not the defect: this machine lacks what the script needs
        print(f"cannot run this reproduction: {err} (see needs: at the top of this file)",
              file=sys.stderr)
        sys.exit(2)
